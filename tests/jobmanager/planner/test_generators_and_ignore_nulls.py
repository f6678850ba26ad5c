"""Generators and ``IGNORE NULLS`` aggregates, planned and run as Tidal runs them (every vertex
in two subtasks, ``tests/examples/one_session.py``), give PySpark's own answer to the same text:
a generator of two outputs (``POSEXPLODE ... AS (pos, col)``) runs its query level whole, a
projection over a generator is not folded into the generator's SELECT, and ``FIRST(x) IGNORE
NULLS`` keeps its ``IGNORE NULLS``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager.model.operators import ParquetSink
from jobmanager.planner import Catalog, plan_sql

pytestmark = pytest.mark.spark

QUERIES = {
    "posexplode": "SELECT id, POSEXPLODE(ARRAY(id, team)) AS (pos, col) FROM t",
    "over a generator": "WITH t1 AS (SELECT id, EXPLODE(ARRAY(STRUCT('a' AS s, id AS v))) AS g "
    "FROM t) SELECT id, g.s, g.v FROM t1",
    "ignore nulls": "SELECT team, FIRST(name) IGNORE NULLS AS f, LAST(name) IGNORE NULLS AS l, "
    "COUNT(*) AS n FROM t GROUP BY team",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_the_planned_query_gives_pysparks_answer(name, tmp_path, spark_session):
    from tests.examples.one_session import run_in_one_session, subtask_counts

    (tmp_path / "t").mkdir()
    pq.write_table(
        pa.table(
            {"id": [1, 2, 3, 4], "team": [10, None, 10, 30], "name": [None, "bob", "cy", None]}
        ),
        tmp_path / "t" / "part-0.parquet",
    )
    query = QUERIES[name]
    planned = plan_sql(
        query, Catalog.from_tables({"t": str(tmp_path / "t")}), ParquetSink(str(tmp_path / "out"))
    )
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    spark_session.read.parquet(str(tmp_path / "t")).createOrReplaceTempView("t")
    expected = spark_session.sql(query).toArrow()
    assert got.column_names == expected.column_names
    assert sorted(got.to_pylist(), key=repr) == sorted(expected.to_pylist(), key=repr)
