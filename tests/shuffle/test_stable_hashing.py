"""The key hash is a pure function of values: the same in every process, on every machine."""

from __future__ import annotations

import datetime
import decimal
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffle import HashPartitioner, hash_array, hash_columns, hashing, partition_rows

REPO = Path(__file__).resolve().parents[2]

# Known answers. If one changes, equal keys written by two Tidal versions no longer meet in one
# subpartition: change them only with a note in the release that mixed versions cannot shuffle.
GOLDEN = {
    "int64 [0, 1, -1, 2**40, null]": (
        pa.array([0, 1, -1, 2**40, None], pa.int64()),
        [
            2480924848214707955,
            16977861514189997900,
            10184301020887363724,
            542230912165225676,
            7249961590253540467,
        ],
    ),
    "string ['', 'a', 'tidal', null]": (
        pa.array(["", "a", "tidal", None]),
        [2480924848214707955, 8028452782150028386, 14764024782182486363, 7249961590253540467],
    ),
    "float64 [1.5, -0.0, nan]": (
        pa.array([1.5, -0.0, float("nan")]),
        [4948240490104357469, 2480924848214707955, 8254162925268570634],
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_known_answers_do_not_change(name):
    values, expected = GOLDEN[name]
    assert hash_array(values).tolist() == expected


def test_multi_column_known_answer():
    table = pa.table({"a": [1, 2], "b": ["x", None]})
    assert hash_columns(table, ["a", "b"]).tolist() == [9194607055737003260, 9284885102846948740]


_MASK = 2**64 - 1
_SEED_FOLDED = 0x243F6A8885A308D3 * 0x9E3779B97F4A7C15 & _MASK


def _reference_fmix64(word: int) -> int:
    word ^= word >> 33
    word = word * 0xFF51AFD7ED558CCD & _MASK
    word ^= word >> 33
    word = word * 0xC4CEB9FE1A85EC53 & _MASK
    return word ^ (word >> 33)


def _reference_bytes_hash(data: bytes) -> int:
    """The documented hash of a one-column string key, one byte at a time in plain Python."""
    polynomial = 0
    for byte in data:
        polynomial = (polynomial * 0x100000001B3 + byte + 1) & _MASK
    word = polynomial ^ (len(data) * 0xC2B2AE3D27D4EB4F & _MASK)
    return _reference_fmix64(_SEED_FOLDED ^ word)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(0, 5))
def test_vectorised_bytes_hash_equals_the_plain_definition(values, skip):
    array = pa.array(values, pa.binary()).slice(min(skip, len(values)))
    assert hash_array(array).tolist() == [_reference_bytes_hash(v) for v in values[skip:]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30))
def test_integer_hash_equals_the_plain_definition(values):
    expected = [_reference_fmix64(_SEED_FOLDED ^ (v & _MASK)) for v in values]
    assert hash_array(pa.array(values, pa.int64())).tolist() == expected


@pytest.mark.parametrize(
    "left, right",
    [
        (pa.array([1, -5, None], pa.int8()), pa.array([1, -5, None], pa.int64())),
        (pa.array([1, 7, None], pa.uint16()), pa.array([1, 7, None], pa.int32())),
        (pa.array([1.5, -0.0, None], pa.float32()), pa.array([1.5, 0.0, None], pa.float64())),
        (pa.array(["ab", "", None]), pa.array([b"ab", b"", None], pa.large_binary())),
        (
            pa.array(["ab", "", None], pa.string_view()),
            pa.array(["ab", "", None], pa.large_string()),
        ),
        (
            pa.array([datetime.date(2024, 2, 29), None], pa.date32()),
            pa.array([datetime.date(2024, 2, 29), None], pa.date64()),
        ),
        (pa.array(["x", "y", "x", None]).dictionary_encode(), pa.array(["x", "y", "x", None])),
        (pa.array([float("nan")]), pa.array([-float("nan")])),
        (pa.array([None, None], pa.null()), pa.array([None, None], pa.string())),
    ],
)
def test_the_same_value_hashes_alike_in_related_types(left, right):
    assert hash_array(left).tolist() == hash_array(right).tolist()


def test_slices_and_chunks_hash_like_the_whole():
    values = pa.array([f"value {i}" if i % 4 else None for i in range(100)])
    whole = hash_array(values)
    assert hash_array(values.slice(13, 40)).tolist() == whole[13:53].tolist()
    chunked = pa.chunked_array([values.slice(0, 30), values.slice(30)])
    assert hash_array(chunked).tolist() == whole.tolist()


def test_long_string_columns_hash_across_internal_blocks():
    values = pa.array(["a" * 5000 + str(i) for i in range(2000)])  # > one 4 MiB block of bytes
    hashes = hash_array(values)
    assert len(set(hashes.tolist())) == 2000
    assert hash_array(values.slice(1500)).tolist() == hashes[1500:].tolist()


@pytest.mark.parametrize("kind", [pa.string(), pa.large_binary()])
def test_a_long_column_of_few_values_hashes_as_each_value_does(kind):
    """Long columns whose values repeat are hashed through their distinct values; short ones
    byte by byte: the words must be the same."""
    names = [f"Brand#{i}".encode() for i in range(20)]
    values = pa.array([names[i * 7 % 20] if i % 9 else None for i in range(10_000)], kind)
    by_piece = np.concatenate([hash_array(values.slice(i, 500)) for i in range(0, 10_000, 500)])
    assert hash_array(values).tolist() == by_piece.tolist()
    assert hash_array(pa.array([b"Brand#7"], kind)).tolist() == [hash_array(values)[1]]


def test_a_table_longer_than_a_hashing_block_hashes_as_its_short_slices_do():
    """Millions of rows are hashed a cache-sized block at a time; the blocks' edges (here not on
    the chunks' edges) change no row's hash, for every key type and a last block part full."""
    rows = 2 * hashing._ROWS_PER_BLOCK + 12_345
    numbers = pa.array([i * 7919 if i % 11 else None for i in range(rows)], pa.int64())
    modes = pa.array([f"MODE{i % 7}" if i % 13 else None for i in range(rows)])  # repeats
    names = pa.array([f"Customer#{i:09d}" for i in range(rows)])  # unique
    table = pa.Table.from_arrays(
        [
            pa.chunked_array([column.slice(0, 40_001), column.slice(40_001)])
            for column in (numbers, modes, names)
        ],
        names=["n", "mode", "name"],
    )
    hashed = hash_columns(table, ["n", "mode", "name"])
    by_slice = [
        hash_columns(table.slice(start, 4_000), ["n", "mode", "name"])
        for start in range(0, rows, 4_000)
    ]
    assert hashed.tolist() == np.concatenate(by_slice).tolist()


@pytest.mark.parametrize("count", [1, 2, 128, 256, 1000, 1024, 65536, 65537, 1 << 17])
def test_a_key_goes_to_its_hash_modulo_the_subpartitions(count):
    """Counts that are powers of two take the hash's low bits: the same subpartition."""
    table = pa.table({"key": np.arange(-5_000, 95_000)})
    ids = HashPartitioner(("key",)).assign(table, count)
    assert ids.tolist() == (hash_columns(table, ["key"]) % np.uint64(count)).tolist()


def test_other_fixed_width_types_hash():
    cases = [
        pa.array([True, False, None]),
        pa.array([datetime.datetime(2020, 1, 1), None], pa.timestamp("us", tz="UTC")),
        pa.array([decimal.Decimal("1.25"), None], pa.decimal128(5, 2)),
        pa.array([b"abcd", None], pa.binary(4)),
        pa.array([datetime.time(1, 2), None], pa.time32("s")),
        pa.array([datetime.timedelta(seconds=3), None], pa.duration("ms")),
    ]
    for values in cases:
        hashes = hash_array(values)
        assert len(hashes) == len(values)
        assert hashes[-1] == hash_array(pa.array([None], pa.null()))[0]


def test_a_type_without_a_defined_hash_is_refused_by_name():
    with pytest.raises(TypeError, match="list<item: int64>"):
        hash_array(pa.array([[1, 2]]))


def test_hash_partitioning_spreads_sequential_keys():
    table = pa.table({"key": np.arange(100_000)})
    counts = partition_rows(table, HashPartitioner(("key",)), 1000).rows_per_subpartition()
    assert counts.min() > 40 and counts.max() < 180  # mean 100


# -- properties ------------------------------------------------------------------------------

_COLUMN_TYPES = {
    "int8": (pa.int8(), st.integers(-128, 127)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "uint32": (pa.uint32(), st.integers(0, 2**32 - 1)),
    "float32": (pa.float32(), st.floats(width=32)),
    "float64": (pa.float64(), st.floats()),
    "bool": (pa.bool_(), st.booleans()),
    "string": (pa.string(), st.text(max_size=12)),
    "large_string": (pa.large_string(), st.text(max_size=12)),
    "binary": (pa.binary(), st.binary(max_size=12)),
    "date32": (pa.date32(), st.dates()),
    "timestamp": (
        pa.timestamp("ms"),
        st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1)),
    ),
}


@st.composite
def keyed_tables(draw):
    """A table of 1-3 key columns of any supported type with nulls, and the key column names.
    Values come from a small pool half the time, so equal keys are common."""
    num_rows = draw(st.integers(0, 40))
    names = draw(st.lists(st.sampled_from(sorted(_COLUMN_TYPES)), min_size=1, max_size=3))
    columns = {}
    for position, name in enumerate(names):
        arrow_type, values = _COLUMN_TYPES[name]
        values = st.none() | values
        if draw(st.booleans()):
            values = st.sampled_from(draw(st.lists(values, min_size=1, max_size=3)))
        columns[f"{name}_{position}"] = pa.array(
            draw(st.lists(values, min_size=num_rows, max_size=num_rows)), arrow_type
        )
    table = pa.table(columns)
    keys = draw(st.permutations(list(table.column_names)))
    return table, keys


@settings(max_examples=150, deadline=None)
@given(keyed_tables(), st.integers(1, 50))
def test_every_row_lands_in_exactly_one_subpartition(table_and_keys, num_subpartitions):
    table, keys = table_and_keys
    partitioner = HashPartitioner(tuple(keys))
    ids = partitioner.assign(table, num_subpartitions).astype(np.int64)
    assert len(ids) == table.num_rows
    assert ((ids >= 0) & (ids < num_subpartitions)).all()
    split = partition_rows(table, partitioner, num_subpartitions)
    assert split.offsets[0] == 0 and split.offsets[-1] == table.num_rows
    for index in range(num_subpartitions):
        expected = table.filter(pa.array(ids == index))
        assert _rows(split.subpartition(index)) == _rows(expected)


def _rows(table: pa.Table) -> list[tuple]:
    """Rows as tuples, NaN spelled out so equal tables compare equal."""
    columns = [table.column(name).to_pylist() for name in table.column_names]
    return [tuple("NaN" if v != v else v for v in row) for row in zip(*columns)]


@settings(max_examples=150, deadline=None)
@given(keyed_tables(), st.integers(1, 50))
def test_equal_keys_land_in_the_same_subpartition(table_and_keys, num_subpartitions):
    table, keys = table_and_keys
    ids = HashPartitioner(tuple(keys)).assign(table, num_subpartitions)
    rows = zip(*(table.column(key).to_pylist() for key in keys))
    seen: dict[tuple, int] = {}
    for key, subpartition in zip(rows, ids.tolist()):
        if any(isinstance(v, float) and v != v for v in key):
            continue  # NaN != NaN in Python, so it cannot be looked up; NaNs are tested above
        assert seen.setdefault(_normalised(key), subpartition) == subpartition


def _normalised(key: tuple) -> tuple:
    return tuple(0.0 if isinstance(v, float) and v == 0 else v for v in key)


_HASHING_PROCESS = """
import struct, sys
import pyarrow as pa
from shuffle import hash_columns
source, sink = sys.stdin.buffer, sys.stdout.buffer
while header := source.read(4):
    table = pa.ipc.open_stream(source.read(struct.unpack("<I", header)[0])).read_all()
    hashes = hash_columns(table, table.column_names).tobytes()
    sink.write(struct.pack("<I", len(hashes)) + hashes)
    sink.flush()
"""


@pytest.fixture(scope="module")
def other_process():
    """A second Python process with another hash seed that hashes the tables it is sent."""
    env = dict(os.environ, PYTHONHASHSEED="4242", PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [sys.executable, "-c", _HASHING_PROCESS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )

    def hash_there(table: pa.Table) -> np.ndarray:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        payload = sink.getvalue().to_pybytes()
        process.stdin.write(struct.pack("<I", len(payload)) + payload)
        process.stdin.flush()
        size = struct.unpack("<I", process.stdout.read(4))[0]
        return np.frombuffer(process.stdout.read(size), dtype=np.uint64)

    yield hash_there
    process.stdin.close()
    process.wait(timeout=30)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(keyed_tables())
def test_another_process_with_another_hash_seed_agrees(other_process, table_and_keys):
    table, keys = table_and_keys
    keyed = table.select(keys)
    assert other_process(keyed).tolist() == hash_columns(keyed, keys).tolist()
