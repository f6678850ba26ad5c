"""Sort keys as bytes: byte order is the ORDER BY order (DuckDB's, which is Spark's for these
types: NaN last, -0.0 = 0.0, strings in binary order), for every direction and nulls order."""

import datetime as dt
import math
from decimal import Decimal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shuffle.keyorder import SortKey, encode_key
from shuffle.range_partitioning import (
    ChunkPartitioner,
    encode_keys,
    keep_key_range,
    sort_into_chunks,
)

_INTS = st.integers(-(2**63), 2**63 - 1)
TYPES = {
    "int": (pa.int64(), st.one_of(st.integers(-3, 3), _INTS)),
    "double": (pa.float64(), st.one_of(st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1.5]),
                                       st.floats(allow_nan=True, width=64))),
    "decimal": (pa.decimal128(38, 6), st.decimals(min_value=Decimal("-1e31"), max_value=Decimal("1e31"),
                                                  places=6, allow_nan=False, allow_infinity=False)),
    "string": (pa.string(), st.text(st.characters(blacklist_categories=("Cs",), min_codepoint=1),
                                    max_size=4)),
    "date": (pa.date32(), st.dates()),
    "timestamp": (pa.timestamp("us"), st.datetimes(min_value=dt.datetime(1, 1, 2),
                                                    max_value=dt.datetime(9999, 12, 30))),
    "bool": (pa.bool_(), st.booleans()),
}  # fmt: skip


@st.composite
def ordered_tables(draw):
    """Rows of two key columns of random types (with ties and nulls) and random orders."""
    kinds = [draw(st.sampled_from(sorted(TYPES))) for _ in range(2)]
    columns = []
    for kind in kinds:
        pool = draw(st.lists(TYPES[kind][1], min_size=1, max_size=4))  # few values: ties
        columns.append(st.one_of(st.none(), st.sampled_from(pool)))
    rows = draw(st.lists(st.tuples(*columns), min_size=1, max_size=30))
    order = tuple(SortKey(f"k{i}", draw(st.booleans()), draw(st.booleans())) for i in range(2))
    table = pa.table(
        {f"k{i}": pa.array([r[i] for r in rows], TYPES[kinds[i]][0]) for i in range(2)}
    )
    return table, order


def _plain(kind: pa.DataType) -> pa.DataType:
    """Dates and timestamps as the integers they are encoded by."""
    if pa.types.is_date32(kind):
        return pa.int32()
    return pa.int64() if pa.types.is_temporal(kind) else kind


def _comparable(value):
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value + 0.0
    return value


def _keys(table: pa.Table) -> list[tuple]:
    return [tuple(_comparable(v) for v in row.values()) for row in table.to_pylist()]


@settings(max_examples=300, deadline=None)
@given(ordered_tables())
def test_byte_order_is_duckdbs_order_by(case):
    rows, order = case
    clause = ", ".join(str(key) for key in order)
    expected = duckdb.sql(f"SELECT k0, k1 FROM rows ORDER BY {clause}").arrow()
    if isinstance(expected, pa.RecordBatchReader):
        expected = expected.read_all()
    keys = encode_keys(rows, order)
    ours = rows.take(pc.sort_indices(keys))
    assert _keys(ours) == _keys(expected)
    assert keys.to_pylist() == [
        encode_key(tuple(row.values()), order)
        for row in rows.cast(  # one encoding
            pa.schema([(f.name, _plain(f.type)) for f in rows.schema])
        ).to_pylist()
    ]


@settings(max_examples=300, deadline=None)
@given(ordered_tables(), st.integers(1, 8))
@example((pa.table({"k0": [1.0, math.nan, 2.0, None]}), (SortKey("k0", True, False),)), 2)
def test_sorted_chunks_are_in_the_encodings_order_and_sample_it(case, max_chunks):
    """Sorted by Arrow where its order is the encoding's, by the encoded bytes where not (a NaN
    key): either way every row once, in byte order, and the bounds are the keys at each chunk's
    first row and at the last row."""
    table, order = case
    chunks = sort_into_chunks(table, order, max_chunks)
    keys = encode_keys(chunks.table, order).to_pylist()
    assert keys == sorted(encode_keys(table, order).to_pylist())
    rows, count = table.num_rows, min(max_chunks, table.num_rows)
    firsts = [(j * rows + count - 1) // count for j in range(count)] + [rows - 1]
    assert chunks.chunks == count and chunks.bounds == tuple(keys[i] for i in firsts)


def test_strings_compare_as_utf8_bytes_and_zero_bytes_stay_prefix_free():
    up = (SortKey("s"),)
    words = ["", "\x00", "a", "a\x00", "a\x00b", "ab", "b", "é", "\uffff", "\U0001f600"]
    encoded = [encode_key((w,), up) for w in words]
    assert sorted(encoded) == encoded
    down = (SortKey("s", True, False),)
    assert sorted(encode_key((w,), down) for w in words) == [
        encode_key((w,), down) for w in reversed(words)
    ]


def test_sorted_chunks_cover_every_row_once_and_sample_each_chunks_lowest_key():
    order = (SortKey("k"),)
    table = pa.table({"k": [5, 3, None, 3, 9, 1, 3, 7]})
    chunks = sort_into_chunks(table, order, 3)
    assert chunks.table.column("k").to_pylist() == [None, 1, 3, 3, 3, 5, 7, 9]
    ids = chunks.partitioner().assign(chunks.table, 4)
    assert ids.tolist() == [0, 0, 0, 1, 1, 1, 2, 2]
    assert chunks.bounds == tuple(encode_key((v,), order) for v in (None, 3, 7, 9))
    assert sort_into_chunks(table.slice(0, 0), order, 3).bounds == ()
    with pytest.raises(ValueError):
        ChunkPartitioner(5, 8).assign(table, 4)


def test_a_consumer_keeps_exactly_its_range():
    order = (SortKey("k"),)
    table = pa.table({"k": [None, 1, 3, 3, 5]})
    low, high = encode_key((3,), order), encode_key((5,), order)
    assert keep_key_range(table, order, None, low).column("k").to_pylist() == [None, 1]
    assert keep_key_range(table, order, low, high).column("k").to_pylist() == [3, 3]
    assert keep_key_range(table, order, high, None).column("k").to_pylist() == [5]
