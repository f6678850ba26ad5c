"""Planned queries against PySpark's own answers, in one local SparkSession.

Each query is planned by Tidal's planner and its job graph run by ``run_in_one_session`` (each
vertex as two subtasks unless fixed, so exchanges really split rows), and the same text is run
by ``spark.sql`` over the same files: the answer nobody here wrote. A small fixed set of tables
with what breaks planners: NULLs in keys and values, duplicate keys, an empty table, decimals,
dates, strings that differ by case or spaces.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from examples.compare import query_is_ordered, sql_difference
from jobmanager.model.operators import ParquetSink
from jobmanager.planner import Catalog, plan_sql

__all__ = ["TABLES", "differences", "write_tables"]

_D = datetime.date
_M = Decimal
TABLES = {
    "emp": pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5, 6, 7, 8], pa.int32()),
            "dept": ["eng", "eng", "ops", "ops", "Eng", None, "hr", "eng"],
            "salary": pa.array(
                [
                    _M("100.00"),
                    _M("120.50"),
                    _M("90.00"),
                    None,
                    _M("75.25"),
                    _M("60.00"),
                    _M("90.00"),
                    _M("100.00"),
                ],
                pa.decimal128(10, 2),
            ),
            "bonus": [1.5, None, 2.0, 0.5, 3.25, 1.0, None, 1.5],
            "hired": [
                _D(2020, 1, 5),
                _D(2021, 3, 1),
                _D(2019, 7, 9),
                _D(2022, 2, 2),
                None,
                _D(2020, 1, 5),
                _D(2018, 12, 31),
                _D(2023, 6, 30),
            ],
            "mgr": pa.array([None, 1, 1, 3, 1, 3, None, 2], pa.int32()),
        }
    ),
    "dept": pa.table(
        {
            "name": ["eng", "ops", "hr", "sales", None, " eng"],
            "region": ["EU", "US", "EU", "US", "EU", "APAC"],
            "budget": pa.array([1000, 500, 200, 300, 50, 10], pa.int64()),
        }
    ),
    "sales": pa.table(
        {
            "emp_id": pa.array([1, 1, 2, 3, 3, 3, 5, 9, None, 2], pa.int32()),
            "day": [
                _D(2024, 1, 1),
                _D(2024, 1, 2),
                _D(2024, 1, 1),
                _D(2024, 2, 1),
                _D(2024, 2, 1),
                None,
                _D(2024, 3, 3),
                _D(2024, 1, 1),
                _D(2024, 1, 5),
                _D(2024, 2, 9),
            ],
            "amount": pa.array(
                [
                    _M("10.10"),
                    _M("20.20"),
                    _M("5.00"),
                    None,
                    _M("7.77"),
                    _M("1.00"),
                    _M("3.30"),
                    _M("9.99"),
                    _M("2.00"),
                    _M("5.00"),
                ],
                pa.decimal128(12, 2),
            ),
            "qty": pa.array([1, 2, 1, 3, None, 1, 2, 5, 1, 1], pa.int32()),
        }
    ),
    "nothing": pa.table({"k": pa.array([], pa.int32()), "v": pa.array([], pa.string())}),
}


def write_tables(directory: Path) -> dict[str, str]:
    """Each table as a folder of two Parquet files (so a scan splits), by name."""
    paths = {}
    for name, table in TABLES.items():
        folder = directory / name
        folder.mkdir(parents=True, exist_ok=True)
        half = table.num_rows // 2
        pq.write_table(table.slice(0, half), folder / "part-0.parquet")
        pq.write_table(table.slice(half), folder / "part-1.parquet")
        paths[name] = str(folder)
    return paths


def differences(queries: list[str], paths: dict[str, str], spark, cut: bool = True) -> list[str]:
    """Each query whose planned answer is not PySpark's, with what differs; ``cut``: also
    each the planner ran whole (``WholeQuery``) rather than cut into its own operators."""
    from tests.examples.one_session import run_in_one_session, subtask_counts

    catalog = Catalog.from_tables(paths)
    for name, path in paths.items():
        spark.read.parquet(path).createOrReplaceTempView(name)
    found = []
    for query in queries:
        expected = spark.sql(query).toArrow()
        planned = plan_sql(query, catalog, ParquetSink("/unused"))
        whole = [v.operator.origin for v in planned.graph.vertices if v.name.startswith("whole")]
        if cut and whole:
            found.append(f"{query}\n  ran whole: {whole[0]}")
        got = run_in_one_session(planned.graph, spark, subtask_counts(planned.graph))
        difference = sql_difference(got, expected, ordered=query_is_ordered(query))
        if difference is not None:
            found.append(f"{query}\n  {difference}")
    return found
