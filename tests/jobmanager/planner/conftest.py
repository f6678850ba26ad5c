"""Small Parquet tables for planning tests: planning reads only their footers, no JVM."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager.planner import Catalog

ROWS = 200


def write_table(directory, table: pa.Table, files: int = 1) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    step = -(-table.num_rows // files)
    for index in range(files):
        pq.write_table(table.slice(index * step, step), directory / f"part-{index}.parquet")
    return str(directory)


@pytest.fixture(scope="session")
def tables(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("planner-tables")
    money = pa.decimal128(15, 2)
    facts = pa.table(
        {
            "k": pa.array([i % 20 for i in range(ROWS)], pa.int32()),
            "g": pa.array([i % 7 for i in range(ROWS)], pa.int64()),
            "v": pa.array([decimal.Decimal(i) / 4 for i in range(ROWS)], money),
            "s": pa.array([f"s{i % 11}" for i in range(ROWS)]),
            "d": pa.array([float(i) for i in range(ROWS)]),
        }
    )
    dims = pa.table(
        {"k": pa.array(range(20), pa.int64()), "name": pa.array([f"n{i}" for i in range(20)])}
    )
    others = pa.table(
        {
            "k": pa.array(range(0, 40, 2), pa.int64()),
            "w": pa.array([decimal.Decimal(i) for i in range(20)], pa.decimal128(12, 3)),
        }
    )
    events = root / "events"
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        write_table(events / f"day={day}", pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    return {
        "facts": write_table(root / "facts", facts, files=2),
        "dims": write_table(root / "dims", dims),
        "others": write_table(root / "others", others),
        "events": {"path": str(events), "partitioning": "hive"},
    }


@pytest.fixture()
def catalog(tables) -> Catalog:
    return Catalog.from_tables(tables)
