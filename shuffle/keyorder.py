"""Sort keys as order-preserving bytes ("memcomparable"), so a range exchange needs no types.

A global ORDER BY runs as several sort tasks, each sorting one key range (see
``jobmanager.core.scheduler.adaptive.ranges``). The producers' samples of keys and the
JobManager's bounds cross processes, and the JobManager compares them; it should know nothing
of Spark's types or orderings to do it. So a key becomes bytes whose plain byte order is Spark's
ORDER BY order, and the core only compares bytes.

Per key column: a null marker, then the value. The marker is 0x00 for a null and 0x01 for a
value when nulls come first, 0x02 for a null when they come last. Values:

- booleans: one byte; integers (dates as days, timestamps as microseconds): 8 bytes, big
  endian, sign bit flipped;
- floating point: the IEEE 754 bits made comparable (sign bit flipped for positives, all bits
  flipped for negatives); -0.0 is 0.0 and every NaN one NaN, above +inf, as Spark orders them;
- decimals: the value times 10^38 as a 32-byte integer, so any two scales compare;
- strings (UTF-8) and binaries: their bytes, with 0x00 written as 0x00 0xFF, then 0x00 0x00:
  binary order, as Spark compares strings, and no encoding is a prefix of another.

A descending column's value bytes are inverted (every encoding being prefix-free, inverting
reverses the order); its marker is not, so NULLS FIRST/LAST mean what they say. Keys of
several columns are the columns' encodings concatenated: prefix-free parts compare as tuples.

Pure Python, no Arrow: the JobManager may import it (it needs only ``SortKey``); the Arrow
side is ``shuffle.range_partitioning``. The bytes do not say their type (an integer and a double
are both 8 bytes), so ``shuffle.keydecode.decode_key``, which ``tidal explain`` uses to show a sort's bounds as
values, needs each column's ``SortKey.sql_type``, which the SQL planner fills in.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

__all__ = ["SortKey", "encode_column", "encode_key", "encode_value"]

_NULL_FIRST, _VALUE, _NULL_LAST = b"\x00", b"\x01", b"\x02"
_SIGN64 = 1 << 63
_DECIMAL_SCALE = 38  # Spark's largest scale: every Spark decimal times 10^38 is an integer
_DECIMAL_BYTES = 32  # |v| * 10^38 < 10^76 < 2^255
_NAN_BITS = 0x7FF8000000000000
_INVERT = bytes(255 - i for i in range(256))


@dataclass(frozen=True, slots=True)
class SortKey:
    """One ORDER BY column: its name, its direction and where its nulls go. Spark's default
    is ASC NULLS FIRST and DESC NULLS LAST (``SortKey.of`` applies it). ``sql_type``: the
    column's Spark type when the planner knows it ("" otherwise), only to read encoded keys
    back (``decode_key``); it takes no part in the order, nor in equality."""

    column: str
    descending: bool = False
    nulls_first: bool = True
    sql_type: str = field(default="", compare=False)

    def __setstate__(self, state) -> None:
        """Unpickle, also a key pickled before ``sql_type`` existed (an archived graph)."""
        defaults = ("", False, True, "")
        values = (*state, *defaults[len(state) :])
        for name, value in zip(("column", "descending", "nulls_first", "sql_type"), values):
            object.__setattr__(self, name, value)

    @staticmethod
    def of(column: str, descending: bool = False, nulls_first: bool | None = None) -> SortKey:
        return SortKey(column, descending, not descending if nulls_first is None else nulls_first)

    def __str__(self) -> str:
        return (
            f"{self.column} {'DESC' if self.descending else 'ASC'} "
            f"NULLS {'FIRST' if self.nulls_first else 'LAST'}"
        )


def encode_value(value: object) -> bytes:
    """One non-null value, ascending."""
    return _encoder(value)(value)


def _encoder(value: object):
    """The ascending encoding of values of ``value``'s type (chosen once per column)."""
    if isinstance(value, bool):
        return _boolean
    if isinstance(value, int):
        return _integer
    if isinstance(value, float):
        return _double
    if isinstance(value, str):
        return _string
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _binary
    if hasattr(value, "as_tuple"):  # decimal.Decimal, without importing it
        return _decimal
    raise TypeError(f"no order-preserving encoding for {type(value).__name__} {value!r}")


def encode_column(values: list, key: SortKey) -> list[bytes]:
    """The encodings of one key column's values (of one type, or None), as ``encode_key``
    writes them: the type's encoding is picked once, so a column costs one pass."""
    null = _NULL_FIRST if key.nulls_first else _NULL_LAST
    first = next((v for v in values if v is not None), None)
    if first is None:
        return [null] * len(values)
    encode = _encoder(first)
    if key.descending:
        return [null if v is None else _VALUE + encode(v).translate(_INVERT) for v in values]
    return [null if v is None else _VALUE + encode(v) for v in values]


def encode_key(values: tuple, order: tuple[SortKey, ...]) -> bytes:
    """The bytes of one row's key: ``values`` in the columns of ``order``."""
    return b"".join(_column(value, key) for value, key in zip(values, order, strict=True))


def _column(value: object, key: SortKey) -> bytes:
    if value is None:
        return _NULL_FIRST if key.nulls_first else _NULL_LAST
    encoded = encode_value(value)
    return _VALUE + (encoded.translate(_INVERT) if key.descending else encoded)


def _boolean(value: bool) -> bytes:
    return b"\x01" if value else b"\x00"


def _integer(value: int) -> bytes:
    return (value + _SIGN64).to_bytes(8, "big")


def _string(value: str) -> bytes:
    return _escaped(value.encode("utf-8"))


def _binary(value) -> bytes:
    return _escaped(bytes(value))


def _double(value: float) -> bytes:
    if math.isnan(value):
        bits = _NAN_BITS
    else:
        (bits,) = struct.unpack(">Q", struct.pack(">d", value + 0.0))  # -0.0 + 0.0 is 0.0
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits & _SIGN64 else bits | _SIGN64
    return bits.to_bytes(8, "big")


def _decimal(value) -> bytes:
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise TypeError(f"no order-preserving encoding for the decimal {value}")
    magnitude = int("".join(map(str, digits)) or "0")
    shift = exponent + _DECIMAL_SCALE
    scaled = magnitude * 10**shift if shift >= 0 else magnitude // 10**-shift
    scaled = -scaled if sign else scaled
    return (scaled + (1 << (8 * _DECIMAL_BYTES - 1))).to_bytes(_DECIMAL_BYTES, "big")


def _escaped(raw: bytes) -> bytes:
    return raw.replace(b"\x00", b"\x00\xff") + b"\x00\x00"
