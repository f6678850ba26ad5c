"""Reading a sort key back as values, for people: ``tidal explain`` shows a global sort's range
bounds as the keys they are. Apart from ``shuffle.keyorder`` (which the scheduling core loads)
because it needs ``datetime``: the core's modules may not import a clock's module, even for
dates that are only values.
"""

from __future__ import annotations

import datetime
import decimal
import struct

from shuffle.keyorder import (
    _DECIMAL_BYTES,
    _DECIMAL_SCALE,
    _INVERT,
    _NULL_FIRST,
    _NULL_LAST,
    _SIGN64,
    _VALUE,
    SortKey,
)

__all__ = ["decode_key"]

_INTEGRAL = ("tinyint", "smallint", "int", "integer", "bigint", "long", "short", "byte")
_EPOCH_DAY = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)


def decode_key(key: bytes, order: tuple[SortKey, ...]) -> tuple:
    """The values ``encode_key`` wrote into ``key`` (None for a null), read with each column's
    ``sql_type``: dates and timestamps come back as such, decimals as ``decimal.Decimal``.
    Raises ValueError where a column's type is unknown or the bytes are not such a key."""
    values, at = [], 0
    for column in order:
        marker = key[at : at + 1]
        at += 1
        if marker in (_NULL_FIRST, _NULL_LAST):
            values.append(None)
            continue
        if marker != _VALUE:
            raise ValueError(f"{column.column}: no key marker at byte {at - 1} of {key.hex()}")
        value, at = _decoded(key, at, column)
        values.append(value)
    if at != len(key):
        raise ValueError(f"{len(key) - at} bytes of {key.hex()} left after the key's columns")
    return tuple(values)


def _decoded(key: bytes, at: int, column: SortKey) -> tuple[object, int]:
    """One value of ``column`` read at ``at``, and where the next column starts."""
    kind = column.sql_type.split("(")[0].strip().lower()
    width = {
        "boolean": 1,
        "float": 8,
        "double": 8,
        "decimal": _DECIMAL_BYTES,
        "date": 8,
        "timestamp": 8,
        "timestamp_ntz": 8,
    }.get(kind, 8 if kind in _INTEGRAL else 0)
    if kind in ("string", "binary"):
        return _decoded_bytes(key, at, column, kind)
    if not width:
        raise ValueError(
            f"{column.column}: cannot read a key of type {column.sql_type or 'unknown'}"
        )
    if at + width > len(key):
        raise ValueError(f"{column.column}: {key.hex()} ends inside a {kind}")
    number = int.from_bytes(_plain(key[at : at + width], column.descending), "big")
    value = _NUMBER_VALUE.get(kind, _integral)(number, column.sql_type)
    return value, at + width


def _decoded_bytes(key: bytes, at: int, column: SortKey, kind: str) -> tuple[object, int]:
    """A string or binary value, escaped and terminated in the key."""
    raw, end = _unescaped(_plain(key[at:], column.descending))
    if end < 0:
        raise ValueError(f"{column.column}: no end of the {kind} in {key.hex()}")
    try:
        return (raw.decode("utf-8") if kind == "string" else raw), at + end
    except UnicodeDecodeError as error:
        raise ValueError(f"{column.column}: not UTF-8 in {key.hex()}") from error


def _double(number: int, sql_type: str) -> float:
    bits = number ^ _SIGN64 if number & _SIGN64 else number ^ 0xFFFFFFFFFFFFFFFF
    (value,) = struct.unpack(">d", bits.to_bytes(8, "big"))
    return value


def _integral(number: int, sql_type: str) -> int:
    return number - _SIGN64


# a fixed-width key's value from its unsigned number, by the column's type
_NUMBER_VALUE = {
    "boolean": lambda number, sql_type: bool(number),
    "float": _double,
    "double": _double,
    "decimal": lambda number, sql_type: _decimal_value(
        number - (1 << (8 * _DECIMAL_BYTES - 1)), sql_type
    ),
    "date": lambda number, sql_type: _EPOCH_DAY + datetime.timedelta(days=number - _SIGN64),
    "timestamp": lambda number, sql_type: (
        _EPOCH + datetime.timedelta(microseconds=number - _SIGN64)
    ),
    "timestamp_ntz": lambda number, sql_type: (
        _EPOCH + datetime.timedelta(microseconds=number - _SIGN64)
    ),
}


def _decimal_value(scaled: int, sql_type: str) -> decimal.Decimal:
    """``scaled`` / 10^38 at the type's scale (``decimal(p,s)``), exactly."""
    with decimal.localcontext(decimal.Context(prec=2 * _DECIMAL_SCALE + 4)):
        value = decimal.Decimal(scaled).scaleb(-_DECIMAL_SCALE)
        _, _, scale = sql_type.partition(",")
        digits = scale.rstrip(") ").strip()
        return (
            value.quantize(decimal.Decimal(1).scaleb(-int(digits)))
            if digits.isdigit()
            else value.normalize()
        )


def _plain(raw: bytes, descending: bool) -> bytes:
    return raw.translate(_INVERT) if descending else raw


def _unescaped(tail: bytes) -> tuple[bytes, int]:
    """The bytes ``_escaped`` wrote at the start of ``tail`` and the length it took, -1 when
    ``tail`` holds no end (0x00 0x00)."""
    out, i = bytearray(), 0
    while i < len(tail):
        if tail[i] != 0:
            out.append(tail[i])
            i += 1
        elif tail[i + 1 : i + 2] == b"\xff":
            out.append(0)
            i += 2
        elif tail[i + 1 : i + 2] == b"\x00":
            return bytes(out), i + 2
        else:
            break
    return bytes(out), -1
