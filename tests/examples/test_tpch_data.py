"""The TPC-H-shaped generator: schemas, row counts, the specification's value rules, the same
bytes for the same scale and seed, part files a source can split, and skipping finished work."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from examples import tpch_data
from examples.tpch_data import (
    CURRENT_DATE,
    MARKET_SEGMENTS,
    NATIONS,
    SCHEMAS,
    TABLES,
    generate,
    row_counts,
)
from jobmanager import FileSource
from tests.examples.conftest import TINY_SCALE


def read(directory, table: str) -> pa.Table:
    return ds.dataset(directory / table).to_table()


def test_every_table_has_its_schema_and_rows(tiny_data):
    counts = row_counts(TINY_SCALE)
    assert counts == {"nation": 25, "customer": 300, "orders": 3000, "lineitem": 12000}
    for table in TABLES:
        assert read(tiny_data, table).schema == SCHEMAS[table], table
    assert read(tiny_data, "customer").num_rows == 300
    assert read(tiny_data, "orders").num_rows == 3000
    lines = read(tiny_data, "lineitem").num_rows
    assert 3000 <= lines <= 7 * 3000 and abs(lines / 3000 - 4) < 0.2


def test_nation_holds_the_real_names_and_regions(tiny_data):
    nation = read(tiny_data, "nation").to_pylist()
    assert [row["n_nationkey"] for row in nation] == list(range(25))
    assert nation[0] == {"n_nationkey": 0, "n_name": "ALGERIA", "n_regionkey": 0}
    assert nation[24] == {"n_nationkey": 24, "n_name": "UNITED STATES", "n_regionkey": 1}
    assert [(row["n_name"], row["n_regionkey"]) for row in nation] == list(NATIONS)


def test_values_follow_the_specification(tiny_data):
    customer = read(tiny_data, "customer")
    orders = read(tiny_data, "orders")
    lines = read(tiny_data, "lineitem")
    assert set(customer["c_mktsegment"].to_pylist()) == set(MARKET_SEGMENTS)
    assert customer["c_name"][0].as_py() == "Customer#000000001"
    assert not any(key % 3 == 0 for key in orders["o_custkey"].to_pylist())
    assert set(orders["o_shippriority"].to_pylist()) == {0}
    low, high = pc.min_max(orders["o_orderdate"]).values()
    assert datetime.date(1992, 1, 1) <= low.as_py() and high.as_py() <= datetime.date(1998, 8, 2)
    assert orders["o_orderkey"].to_pylist()[:10] == [1, 2, 3, 4, 5, 6, 7, 8, 33, 34]

    quantity = lines["l_quantity"].to_numpy()
    assert quantity.min() >= 1 and quantity.max() <= 50 and (quantity == np.round(quantity)).all()
    assert set(np.round(lines["l_discount"].to_numpy() * 100)) == set(range(11))
    assert set(np.round(lines["l_tax"].to_numpy() * 100)) == set(range(9))
    low, high = pc.min_max(lines["l_shipdate"]).values()
    assert datetime.date(1992, 1, 2) <= low.as_py() and high.as_py() <= datetime.date(1998, 12, 31)

    joined = lines.join(orders, "l_orderkey", "o_orderkey").to_pylist()
    assert len(joined) == lines.num_rows
    for line in joined:
        days = (line["l_shipdate"] - line["o_orderdate"]).days
        assert 1 <= days <= 121
        assert line["l_receiptdate"] > line["l_shipdate"]
        returned = line["l_receiptdate"] <= CURRENT_DATE
        assert (line["l_returnflag"] in "RA") if returned else line["l_returnflag"] == "N"
        assert line["l_linestatus"] == ("O" if line["l_shipdate"] > CURRENT_DATE else "F")


def test_order_status_and_total_price_come_from_the_lines(tiny_data):
    orders = {row["o_orderkey"]: row for row in read(tiny_data, "orders").to_pylist()}
    statuses: dict[int, set[str]] = {}
    charged: dict[int, float] = {}
    for line in read(tiny_data, "lineitem").to_pylist():
        key = line["l_orderkey"]
        statuses.setdefault(key, set()).add(line["l_linestatus"])
        price = line["l_extendedprice"] * (1 + line["l_tax"]) * (1 - line["l_discount"])
        charged[key] = charged.get(key, 0.0) + round(price, 2)
    for key, order in orders.items():
        expected = statuses[key].pop() if len(statuses[key]) == 1 else "P"
        assert order["o_orderstatus"] == expected
        assert order["o_totalprice"] == pytest.approx(charged[key], abs=0.011)


def test_the_same_scale_and_seed_give_the_same_tables(tiny_data, tmp_path):
    again = generate(tmp_path / "again", TINY_SCALE)
    other = generate(tmp_path / "other", TINY_SCALE, seed=1)
    for table in TABLES:
        assert ds.dataset(again[table]).to_table().equals(read(tiny_data, table)), table
    assert not ds.dataset(other["orders"]).to_table().equals(read(tiny_data, "orders"))


def test_a_generated_table_is_kept_and_a_different_scale_replaces_it(tmp_path):
    paths = generate(tmp_path, 0.001)
    part = tmp_path / "orders" / "part-00000.parquet"
    first = part.stat().st_mtime_ns
    assert generate(tmp_path, 0.001) == paths
    assert part.stat().st_mtime_ns == first
    generate(tmp_path, 0.002)
    assert ds.dataset(paths["orders"]).count_rows() == 3000
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TABLES)


def test_tables_are_part_files_of_row_groups_that_sources_split(tmp_path, monkeypatch):
    monkeypatch.setattr(tpch_data, "ROW_GROUP_BYTES", 32 << 10)
    monkeypatch.setattr(tpch_data, "FILE_BYTES", 128 << 10)
    paths = generate(tmp_path, TINY_SCALE)
    files = sorted((tmp_path / "lineitem").glob("part-*.parquet"))
    assert len(files) >= 2
    assert all(pq.ParquetFile(f).metadata.num_row_groups > 1 for f in files[:-1])
    splits = FileSource(paths["lineitem"]).splits(target_split_bytes=16 << 10)
    assert len(splits) > len(files)
    reference = generate(tmp_path / "default-layout", TINY_SCALE)
    assert (
        ds.dataset(paths["lineitem"])
        .to_table()
        .equals(ds.dataset(reference["lineitem"]).to_table())
    )


def test_the_marker_is_hidden_from_readers(tiny_data):
    assert (tiny_data / "orders" / "_tidal_tpch.json").exists()
    splits = FileSource(str(tiny_data / "orders")).splits(target_split_bytes=1 << 20)
    assert all(split.path.endswith(".parquet") for split in splits)


def test_the_command_line_generates_and_reports(tmp_path, capsys):
    tpch_data.main(["--scale", "0.001", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "orders" in out and "1,500 rows" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TABLES)


def test_a_scale_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="scale must be positive"):
        generate(tmp_path, 0)
