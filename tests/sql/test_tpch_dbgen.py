"""The real TPC-H tables (``examples.tpch_dbgen``): dbgen's row counts and types survive the trip
through Parquet, files are cut so sources can split them, finished tables are kept, a failed
generation leaves the old table whole, and DuckDB's answers over the files are its answers over
its own tables."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from examples import tpch_dbgen
from examples.compare import query_is_ordered, sql_difference
from examples.tpch_dbgen import TABLES, duckdb_answer, generate, queries
from jobmanager import FileSource
from tests.sql.conftest import DBGEN_SCALE

# The row counts DuckDB documents for dbgen at scale factor 0.01.
ROWS_AT_SF_001 = {
    "lineitem": 60175,
    "orders": 15000,
    "customer": 1500,
    "part": 2000,
    "partsupp": 8000,
    "supplier": 100,
    "nation": 25,
    "region": 5,
}
MONEY = {
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "o_totalprice",
    "p_retailprice",
    "ps_supplycost",
    "c_acctbal",
    "s_acctbal",
}
DATES = {"l_shipdate", "l_commitdate", "l_receiptdate", "o_orderdate"}
INT64_KEYS = {
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "o_orderkey",
    "o_custkey",
    "p_partkey",
    "ps_partkey",
    "ps_suppkey",
    "c_custkey",
    "s_suppkey",
}
INT32 = {
    "n_nationkey",
    "n_regionkey",
    "r_regionkey",
    "c_nationkey",
    "s_nationkey",
    "o_shippriority",
    "p_size",
}  # dbgen's INTEGER columns


@pytest.fixture(scope="module")
def dbgen_tables():
    """DuckDB's own in-memory tables at the fixture's scale (not read from any file)."""
    connection = tpch_dbgen._tpch_connection()
    connection.execute(f"CALL dbgen(sf={DBGEN_SCALE})")
    yield connection
    connection.close()


def test_every_table_has_dbgens_row_count(tpch_dbgen_data):
    for table in TABLES:
        files = sorted((tpch_dbgen_data / table).glob("part-*.parquet"))
        assert sum(pq.read_metadata(f).num_rows for f in files) == ROWS_AT_SF_001[table], table


def test_types_are_dbgens(tpch_dbgen_data, dbgen_tables):
    for table in TABLES:
        schema = ds.dataset(tpch_dbgen_data / table).schema
        own = dbgen_tables.execute(f"SELECT * FROM {table} LIMIT 0").to_arrow_table().schema
        assert schema == own, table
        for field in schema:
            if field.name in MONEY:
                assert field.type == pa.decimal128(15, 2), field
            elif field.name in DATES:
                assert field.type == pa.date32(), field
            elif field.name in INT64_KEYS:
                assert field.type == pa.int64(), field
            elif field.name in INT32:
                assert field.type == pa.int32(), field
            elif field.name not in ("l_linenumber", "ps_availqty"):  # BIGINT counts
                assert field.type == pa.string(), field


def test_the_rows_are_dbgens_in_its_order(tpch_dbgen_data, dbgen_tables):
    for table in ("lineitem", "nation"):
        own = dbgen_tables.execute(f"SELECT * FROM {table}").to_arrow_table()
        assert ds.dataset(tpch_dbgen_data / table).to_table().equals(own), table
    first = ds.dataset(tpch_dbgen_data / "lineitem").head(1).to_pylist()[0]
    assert (first["l_orderkey"], first["l_linenumber"]) == (1, 1)
    assert first["l_shipdate"] == datetime.date(1996, 3, 13)


def test_the_marker_is_hidden_from_readers(tpch_dbgen_data):
    marker = tpch_dbgen_data / "orders" / "_tidal_tpch_dbgen.json"
    assert '"scale": 0.01' in marker.read_text()
    splits = FileSource(str(tpch_dbgen_data / "orders")).splits(target_split_bytes=1 << 20)
    assert splits and all(split.path.endswith(".parquet") for split in splits)
    assert sorted(p.name for p in tpch_dbgen_data.iterdir()) == sorted(TABLES)


def test_big_tables_are_cut_into_files_of_row_groups_that_sources_split(tmp_path, tpch_dbgen_data):
    paths = generate(tmp_path, DBGEN_SCALE, file_bytes=256 << 10, row_group_bytes=64 << 10)
    files = sorted((tmp_path / "lineitem").glob("part-*.parquet"))
    assert len(files) >= 5  # 1.9 MiB of lineitem
    for file in files[:-1]:
        metadata = pq.ParquetFile(file).metadata
        assert metadata.num_row_groups == 4, file  # 256 KiB over 64 KiB
        assert 128 << 10 < file.stat().st_size < 512 << 10, file
    assert len(list((tmp_path / "region").glob("part-*.parquet"))) == 1
    splits = FileSource(paths["lineitem"]).splits(target_split_bytes=64 << 10)
    assert len(splits) > len(files)
    other_layout = ds.dataset(tpch_dbgen_data / "lineitem").to_table()
    assert ds.dataset(paths["lineitem"]).to_table().equals(other_layout)


def test_the_fixtures_tables_are_split_so_queries_cross_exchanges(tpch_dbgen_data):
    files = sorted((tpch_dbgen_data / "lineitem").glob("part-*.parquet"))
    assert len(files) == 2
    assert sum(pq.ParquetFile(f).metadata.num_row_groups for f in files) == 15
    orders = FileSource(str(tpch_dbgen_data / "orders")).splits(target_split_bytes=128 << 10)
    assert len(orders) > 1


def test_a_generated_table_is_kept_and_another_layout_or_scale_replaces_it(tmp_path):
    generate(tmp_path, 0.001)
    part = tmp_path / "orders" / "part-00000.parquet"
    first = part.stat().st_mtime_ns
    generate(tmp_path, 0.001)
    assert part.stat().st_mtime_ns == first
    generate(tmp_path, 0.001, row_group_bytes=1 << 20)
    assert part.stat().st_mtime_ns != first
    generate(tmp_path, 0.002)
    assert ds.dataset(tmp_path / "orders").count_rows() == 3000
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TABLES)


def test_a_failed_generation_leaves_the_old_tables_whole(tmp_path, monkeypatch):
    generate(tmp_path, 0.001)
    before = {table: ds.dataset(tmp_path / table).to_table() for table in TABLES}

    class Failing(tpch_dbgen.PartWriter):
        def write(self, table: pa.Table) -> None:
            super().write(table)
            raise OSError("disk full")

    monkeypatch.setattr(tpch_dbgen, "PartWriter", Failing)
    with pytest.raises(OSError, match="disk full"):
        generate(tmp_path, 0.002)
    for table in TABLES:
        assert ds.dataset(tmp_path / table).to_table().equals(before[table]), table
        assert '"scale": 0.001' in (tmp_path / table / "_tidal_tpch_dbgen.json").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TABLES)  # no half table left


def test_a_scale_must_be_positive_and_a_layout_known(tmp_path):
    with pytest.raises(ValueError, match="scale must be positive"):
        generate(tmp_path, 0)
    with pytest.raises(ValueError, match="layout must be one of parts, duckdb, got 'csv'"):
        generate(tmp_path, 0.001, layout="csv")


def test_duckdbs_layout_is_one_file_a_table_of_its_own_row_groups_that_sources_split(
    tmp_path, tpch_dbgen_data
):
    paths = generate(tmp_path, DBGEN_SCALE, layout="duckdb")
    assert sorted(p.name for p in (tmp_path / "lineitem").glob("*.parquet")) == ["lineitem.parquet"]
    metadata = pq.ParquetFile(tmp_path / "lineitem" / "lineitem.parquet").metadata
    assert metadata.num_rows == ROWS_AT_SF_001["lineitem"] * DBGEN_SCALE / 0.01
    assert (
        ds.dataset(paths["lineitem"])
        .to_table()
        .equals(ds.dataset(tpch_dbgen_data / "lineitem").to_table())
    )
    parts = generate(tmp_path, DBGEN_SCALE)  # the other layout replaces it
    assert len(list((tmp_path / "lineitem").glob("part-*.parquet"))) >= 1 and parts == paths


def test_the_22_queries_are_the_specifications():
    texts = queries()
    assert sorted(texts) == list(range(1, 23))
    assert "l_shipdate <= CAST('1998-09-02' AS date)" in texts[1]  # DELTA = 90, validation's
    assert "r_name = 'EUROPE'" in texts[2] and "p_size = 15" in texts[2]
    assert "LIMIT 100" in texts[21] and "n_name = 'SAUDI ARABIA'" in texts[21]
    unordered = {number for number, text in texts.items() if not query_is_ordered(text)}
    assert unordered == {6, 14, 17, 19}  # single-row answers
    texts[1] = "changed"
    assert queries()[1].startswith("SELECT")  # each call hands out its own dict


def test_duckdbs_answers_over_the_files_are_its_answers_over_its_own_tables(
    tpch_dbgen_data, dbgen_tables
):
    for number, text in queries().items():
        over_files = duckdb_answer(tpch_dbgen_data, text)
        own = dbgen_tables.execute(text).to_arrow_table()
        assert own.num_rows > 0, number
        assert sql_difference(over_files, own, query_is_ordered(text)) is None, number


def test_q1_and_q6_give_their_known_answers(tpch_dbgen_data):
    """The answers DuckDB's extension ships for scale 0.01 (``tpch_answers()``)."""
    q1 = duckdb_answer(tpch_dbgen_data, queries()[1])
    groups = [
        (row["l_returnflag"], row["l_linestatus"], row["count_order"]) for row in q1.to_pylist()
    ]
    assert groups == [("A", "F", 14876), ("N", "F", 348), ("N", "O", 29181), ("R", "F", 14902)]
    assert q1["sum_charge"][0].as_py() == Decimal("526165934.000839")
    assert q1["avg_qty"][0].as_py() == pytest.approx(25.575154611454693, rel=1e-12)
    q6 = duckdb_answer(tpch_dbgen_data, queries()[6])
    assert q6.column_names == ["revenue"]
    assert q6["revenue"].to_pylist() == [Decimal("1193053.2253")]
