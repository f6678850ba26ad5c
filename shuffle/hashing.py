"""A stable, vectorised hash of Arrow key columns, for HASH partitioning.

Two producers on different machines must send equal keys to the same subpartition, so the hash
cannot be Python's ``hash`` (salted per process) nor Arrow's internal hashing (free to change
between releases). It is defined here, on values, with numpy arithmetic over whole columns:

- integers of any width and signedness: the value as a 64-bit two's-complement word;
- floats of any width: the float64 bit pattern, with ``-0.0`` folded into ``0.0`` and every NaN
  into one NaN;
- booleans: 0 or 1;
- strings and binaries (plain, large, view, fixed-size): a polynomial over the bytes, mixed with
  the length, so ``"ab"`` as ``string`` and as ``large_binary`` hash alike;
- dates: days since the epoch (``date64`` is converted to days); timestamps, times and durations:
  the stored integer in the column's own unit, so both sides of a join must use the same unit;
- decimals: their 16 or 32 stored bytes, so both sides must use the same precision and scale;
- dictionary columns: the hash of the decoded value;
- nulls (and the ``null`` type): one fixed constant.

Each value above becomes one 64-bit word (a string's is ``sum((byte_i + 1) * P**(n - 1 - i))
^ (n * L)`` modulo 2**64 for its ``n`` bytes). A row's hash folds its key columns' words left to
right through MurmurHash3's 64-bit finaliser: ``h = SEED``, then ``h = fmix64((h * F) ^ word)``
per column, so ``(a, b)`` and ``(b, a)`` differ. ``tests/shuffle`` pins known answers and a
plain-Python reference: changing any of this would split a key across subpartitions in a
cluster that runs two versions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jobmanager.errors import OutputTypeError

__all__ = ["hash_array", "hash_columns"]

_NULL_WORD = np.uint64(0x5BD1E9955BD1E995)
_SEED = 0x243F6A8885A308D3
_FOLD_PRIME = np.uint64(0x9E3779B97F4A7C15)
_SEED_FOLDED = np.uint64(_SEED * int(_FOLD_PRIME) % 2**64)
_BYTE_PRIME = np.uint64(0x100000001B3)
_LENGTH_PRIME = np.uint64(0xC2B2AE3D27D4EB4F)
_BYTES_PER_BLOCK = 1 << 22  # string bytes hashed per numpy pass; bounds the temporary arrays
_SAMPLE = 1024  # values of a long byte column looked at to tell whether its values repeat
_ROWS_PER_BLOCK = 1 << 16  # rows hashed per pass: 512 KiB of words, in the CPU's cache


def hash_columns(rows: pa.Table | pa.RecordBatch, keys: Sequence[str]) -> np.ndarray:
    """One uint64 per row: the stable hash of the row's values in the ``keys`` columns.

    ``h = SEED``, then for each key column ``h = fmix64((h * FOLD_PRIME) ^ word)``, where
    ``word`` is the value's 64-bit word (see the module docstring)."""
    if not keys:
        raise ValueError("hashing needs at least one key column")
    missing = [key for key in keys if key not in rows.column_names]
    if missing:
        raise KeyError(f"key columns {missing} not in {rows.column_names}")
    columns = [rows.column(key) for key in keys]
    if rows.num_rows <= _ROWS_PER_BLOCK:
        return _hash_block(columns, np.empty(rows.num_rows, dtype=np.uint64))
    hashes = np.empty(rows.num_rows, dtype=np.uint64)
    scratch = np.empty(_ROWS_PER_BLOCK, dtype=np.uint64)
    for start in range(0, rows.num_rows, _ROWS_PER_BLOCK):
        block = _hash_block(
            [column.slice(start, _ROWS_PER_BLOCK) for column in columns],
            scratch[: min(_ROWS_PER_BLOCK, rows.num_rows - start)],
        )
        hashes[start : start + len(block)] = block
    return hashes


def _hash_block(columns: Sequence[pa.Array | pa.ChunkedArray], scratch: np.ndarray) -> np.ndarray:
    """The hashes of rows few enough that their words and the finaliser's passes over them stay
    in the CPU's cache: over a whole column of millions, each of the finaliser's eight passes
    goes to memory, and a column-sized temporary is fresh pages to fault in (6 M keys: 75-105
    ms in one pass, 26-45 ms in blocks)."""
    hashes = None
    for column in columns:
        words = _column_words(column)
        if hashes is None:
            words ^= _SEED_FOLDED
        else:
            np.multiply(hashes, _FOLD_PRIME, out=scratch)
            words ^= scratch
        hashes = _fmix64_in_place(words, scratch)
    return hashes


def hash_array(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """One uint64 per value: the hash of a one-column key (equal to :func:`hash_columns`)."""
    words = _column_words(values)
    words ^= _SEED_FOLDED
    return _fmix64_in_place(words, np.empty_like(words))


def _fmix64_in_place(words: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """MurmurHash3's finaliser, a bijection on 64-bit words with full avalanche, computed in
    place: a fresh array per step would cost more in page faults than the arithmetic."""
    for multiplier in (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53), None):
        np.right_shift(words, np.uint64(33), out=scratch)
        words ^= scratch
        if multiplier is not None:
            words *= multiplier
    return words


def _column_words(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A fresh, writable uint64 array of each value's word."""
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            return _words(values.chunk(0))
        return np.concatenate(
            [_words(chunk) for chunk in values.chunks] or [np.empty(0, np.uint64)]
        )
    return _words(values)


def _is_variable_bytes(kind: pa.DataType) -> bool:
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    )


def _words(values: pa.Array) -> np.ndarray:
    kind = values.type
    if isinstance(values, pa.ExtensionArray):
        return _words(values.storage)
    if pa.types.is_null(kind):
        return np.full(len(values), _NULL_WORD, dtype=np.uint64)
    if pa.types.is_dictionary(kind):
        return _dictionary_words(values)
    recast = _hashed_as(kind)
    if recast is not None:
        return _words(pc.cast(values, recast))
    if _is_variable_bytes(kind) and _repeats(values):
        return _dictionary_words(pc.dictionary_encode(values))
    return _with_nulls(values, _plain_words(values, kind))


def _hashed_as(kind: pa.DataType) -> pa.DataType | None:
    """The type a column of ``kind`` is cast to before it is hashed, if any: a date64 as the
    date32 Spark has, a view as the bytes it views."""
    if pa.types.is_date64(kind):
        return pa.date32()
    if pa.types.is_string_view(kind) or pa.types.is_binary_view(kind):
        return pa.large_binary()
    return None


def _plain_words(values: pa.Array, kind: pa.DataType) -> np.ndarray:
    """The words of a column that is neither null, dictionary nor recast, nulls aside."""
    if _is_variable_bytes(kind):
        return _variable_bytes_words(values)
    if pa.types.is_fixed_size_binary(kind) or pa.types.is_decimal(kind):
        return _fixed_bytes_words(values)
    return _value_words(values)


def _repeats(values: pa.Array) -> bool:
    """Whether a byte column's values repeat so much (a brand, a ship mode, a nation) that
    hashing each distinct value once and looking the words up per row (Arrow's dictionary
    encoding) beats hashing every row's bytes: eight times faster on TPC-H q16's part types,
    half again as slow on unique names, hence the look at an evenly spread sample first."""
    if len(values) < 4 * _SAMPLE:
        return False
    sample = values.take(pa.array(np.arange(0, len(values), len(values) // _SAMPLE)))
    return pc.count_distinct(sample).as_py() * 4 <= len(sample)


def _value_words(values: pa.Array) -> np.ndarray:
    """The 64-bit word each fixed-width value is hashed as."""
    kind = values.type
    if pa.types.is_boolean(kind):
        return _without_nulls(values, False).to_numpy(zero_copy_only=False).astype(np.uint64)
    if pa.types.is_integer(kind):
        plain = _without_nulls(values, 0).to_numpy()
        if pa.types.is_unsigned_integer(kind):
            return plain.astype(np.uint64)
        return plain.astype(np.int64).view(np.uint64)  # astype copies: the result is ours
    if pa.types.is_floating(kind):
        plain = _without_nulls(values, 0.0).to_numpy().astype(np.float64)
        plain = plain + 0.0  # folds -0.0 into 0.0
        plain[np.isnan(plain)] = np.nan
        return plain.view(np.uint64)
    if pa.types.is_temporal(kind) and kind.bit_width in (32, 64):
        return _value_words(values.view(pa.int64() if kind.bit_width == 64 else pa.int32()))
    raise OutputTypeError(f"cannot hash-partition on a column of type {kind}")


def _without_nulls(values: pa.Array, filler: object) -> pa.Array:
    """The values with nulls replaced (their hash is overwritten later), so numpy can view them."""
    return pc.fill_null(values, filler) if values.null_count else values


def _with_nulls(values: pa.Array, words: np.ndarray) -> np.ndarray:
    if values.null_count:
        words[values.is_null().to_numpy(zero_copy_only=False)] = _NULL_WORD
    return words


def _dictionary_words(values: pa.DictionaryArray) -> np.ndarray:
    dictionary_words = _words(values.dictionary)
    if len(dictionary_words) == 0:
        return np.full(len(values), _NULL_WORD, dtype=np.uint64)
    indices = _without_nulls(values.indices, 0).to_numpy().astype(np.int64)
    return _with_nulls(values, dictionary_words[indices])


def _variable_bytes_words(values: pa.Array) -> np.ndarray:
    offset_type = np.int64 if values.type in (pa.large_string(), pa.large_binary()) else np.int32
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[
        values.offset : values.offset + len(values) + 1
    ].astype(np.int64)
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.empty(0, np.uint8)
    )
    return _byte_rows_words(data, offsets)


def _fixed_bytes_words(values: pa.Array) -> np.ndarray:
    width = values.type.byte_width
    data = np.frombuffer(values.buffers()[1], dtype=np.uint8)
    offsets = (np.arange(len(values) + 1, dtype=np.int64) + values.offset) * width
    return _byte_rows_words(data, offsets)


def _byte_rows_words(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The word of row ``i`` = ``data[offsets[i]:offsets[i+1]]``, a few MiB of bytes per pass."""
    num_rows = len(offsets) - 1
    words = np.empty(num_rows, dtype=np.uint64)
    first = 0
    while first < num_rows:
        last = int(np.searchsorted(offsets, offsets[first] + _BYTES_PER_BLOCK, side="right")) - 1
        last = min(max(last, first + 1), num_rows)
        words[first:last] = _polynomial(data, offsets[first : last + 1])
        first = last
    lengths = np.diff(offsets).astype(np.uint64)
    words ^= lengths * _LENGTH_PRIME
    return words


def _polynomial(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``sum((byte_i + 1) * P**(len - 1 - i))`` modulo 2**64 for each row, without a row loop."""
    lengths = np.diff(offsets)
    polynomial = np.zeros(len(lengths), dtype=np.uint64)
    total = int(offsets[-1] - offsets[0])
    if total == 0:
        return polynomial
    powers = np.empty(int(lengths.max()), dtype=np.uint64)
    powers[0] = 1
    powers[1:] = _BYTE_PRIME
    powers = np.multiply.accumulate(powers)
    row_last = np.repeat(offsets[1:] - 1, lengths)
    exponents = row_last - np.arange(offsets[0], offsets[-1], dtype=np.int64)
    terms = (data[offsets[0] : offsets[-1]].astype(np.uint64) + np.uint64(1)) * powers[exponents]
    nonempty = lengths > 0
    polynomial[nonempty] = np.add.reduceat(terms, (offsets[:-1] - offsets[0])[nonempty])
    return polynomial
