"""Hand-built SQL jobs, shaped as the planner cuts a query: vertices of ``SqlOperator`` pieces
reading their sources (``s0``) and incoming edges (``in0``, ``in1``), hashed into an aggregate,
a small side broadcast into a scan, the last vertex ``result`` running the sink. With the
tables they read and the rows they must give, computed in plain Python."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.operators import ParquetSink, SqlOperator
from jobmanager.model.sources import FileSource

ROWS = 600
NAMES = {0: "zero", 1: "one", 2: "two", 3: "three", 4: "four"}


def lines_table() -> pa.Table:
    return pa.table(
        {
            "l_key": pa.array([i % 7 for i in range(ROWS)], pa.int64()),
            "l_value": pa.array(range(ROWS), pa.int64()),
            "l_flag": ["A" if i % 3 else "B" for i in range(ROWS)],
        }
    )


def write_tables(directory: Path) -> dict[str, str]:
    """``lines`` in two files, ``names`` in one; their directories by table name."""
    lines = lines_table()
    (directory / "lines").mkdir(parents=True)
    pq.write_table(lines.slice(0, ROWS // 2), directory / "lines" / "part-0.parquet")
    pq.write_table(lines.slice(ROWS // 2), directory / "lines" / "part-1.parquet")
    (directory / "names").mkdir()
    pq.write_table(
        pa.table({"n_key": pa.array(list(NAMES), pa.int64()), "n_name": list(NAMES.values())}),
        directory / "names" / "part-0.parquet",
    )
    return {"lines": str(directory / "lines"), "names": str(directory / "names")}


AGGREGATE = "SELECT l_key AS key, SUM(l_value) AS total FROM in0 GROUP BY l_key"


def aggregate_job(
    tables: dict[str, str],
    sink: ParquetSink,
    *,
    scan_parallelism: int = 2,
    agg_parallelism: int | None = None,
    agg_sql: str = AGGREGATE,
    name: str = "sql-aggregate",
) -> JobGraph:
    """scan (filter) --hash(l_key)--> agg (sum per key) --forward--> result."""
    g = JobGraph(name)
    scan = g.add_vertex(
        "scan",
        parallelism=scan_parallelism,
        sources=[FileSource(tables["lines"], columns=["l_key", "l_value", "l_flag"])],
        operator=SqlOperator(
            "SELECT l_key, l_value FROM s0 WHERE l_flag = 'A'",
            ("s0",),
            "FROM lines WHERE l_flag = 'A'",
        ),
    )
    agg = g.add_vertex(
        "agg",
        parallelism=agg_parallelism,
        operator=SqlOperator(
            agg_sql, ("in0",), "SELECT l_key AS key, SUM(l_value) AS total ... GROUP BY l_key"
        ),
    )
    result = g.add_vertex("result", operator=sink)
    g.connect(scan, agg, Partitioner.hash("l_key"))
    g.connect(agg, result, Partitioner.FORWARD)
    return g


def expected_aggregate() -> dict[int, int]:
    totals: dict[int, int] = {}
    for row in lines_table().to_pylist():
        if row["l_flag"] == "A":
            totals[row["l_key"]] = totals.get(row["l_key"], 0) + row["l_value"]
    return totals


def join_job(tables: dict[str, str], sink: ParquetSink, name: str = "sql-join") -> JobGraph:
    """names --broadcast--> scan (joins them) --hash(name)--> agg --forward--> result."""
    g = JobGraph(name)
    names = g.add_vertex(
        "names",
        sources=[FileSource(tables["names"])],
        operator=SqlOperator(
            "SELECT n_key, n_name FROM s0 WHERE n_key < 4", ("s0",), "FROM names WHERE n_key < 4"
        ),
    )
    scan = g.add_vertex(
        "scan",
        parallelism=2,
        sources=[FileSource(tables["lines"])],
        operator=SqlOperator(
            "SELECT n.n_name, l.l_value FROM s0 l JOIN in0 n ON l.l_key = n.n_key",
            ("s0", "in0"),
            "lines JOIN names ON l_key = n_key",
        ),
    )
    agg = g.add_vertex(
        "agg",
        operator=SqlOperator(
            "SELECT n_name, SUM(l_value) AS total FROM in0 GROUP BY n_name ORDER BY n_name",
            ("in0",),
            "GROUP BY n_name ORDER BY n_name",
        ),
    )
    result = g.add_vertex("result", operator=sink)
    g.connect(names, scan, Partitioner.BROADCAST)
    g.connect(scan, agg, Partitioner.hash("n_name"))
    g.connect(agg, result, Partitioner.FORWARD)
    return g


def expected_join() -> dict[str, int]:
    totals: dict[str, int] = {}
    for row in lines_table().to_pylist():
        if row["l_key"] < 4:
            name = NAMES[row["l_key"]]
            totals[name] = totals.get(name, 0) + row["l_value"]
    return totals
