"""The same-plan control (``benchmarks/same_plan.py``): Tidal's plan of a query composed into
one Spark SQL query. The composition's shape on tiny tables, with no JVM; then all 22 TPC-H
queries at scale 0.01, as Tidal plans them run by one local SparkSession, against DuckDB's
answers over the same files, with the planner's defaults (broadcasts, tables read whole in
the scans' tasks) and with every join shuffled (hash edges, runtime join marks,
``SHUFFLE_HASH`` hints)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlglot
from sqlglot import exp

from benchmarks.same_plan import composed_sql, planned_sql, register_views, spark_on_same_plan
from examples.compare import query_is_ordered, sql_difference
from jobmanager.model.config import BROADCAST_THRESHOLD, READ_WHOLE_THRESHOLD, Configuration
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.operators import ParquetSink, SqlOperator, spark
from jobmanager.model.sources import FileSource
from jobmanager.planner import Catalog, plan_sql

SHUFFLED = {
    BROADCAST_THRESHOLD.key: "-1",
    READ_WHOLE_THRESHOLD.key: "-1",
}
_QUERY = (
    "SELECT o.k, SUM(i.v) AS total, COUNT(*) AS n FROM shop_orders o JOIN shop_items i "
    "ON o.k = i.k WHERE o.flag = 'a' GROUP BY o.k ORDER BY total DESC, o.k LIMIT 3"
)


@pytest.fixture
def tiny_tables(tmp_path):
    paths = {"shop_orders": tmp_path / "shop_orders", "shop_items": tmp_path / "shop_items"}
    for path in paths.values():
        path.mkdir()
    pq.write_table(
        pa.table({"k": [1, 2, 3, 4], "flag": ["a", "b", "a", "a"]}),
        paths["shop_orders"] / "part-0.parquet",
    )
    pq.write_table(
        pa.table({"k": [1, 1, 3, 4, 4, 4], "v": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}),
        paths["shop_items"] / "part-0.parquet",
    )
    return {name: str(path) for name, path in paths.items()}


def _planned(tables, tmp_path, config=None):
    return plan_sql(
        _QUERY,
        Catalog.from_tables(tables),
        ParquetSink(str(tmp_path / "out")),
        Configuration(config or {}),
    )


@pytest.mark.parametrize("config", [None, SHUFFLED], ids=["planned", "shuffled"])
def test_the_composed_query_has_one_cte_per_sql_vertex(tiny_tables, tmp_path, config):
    graph = _planned(tiny_tables, tmp_path, config).graph
    pieces = [v for v in graph.topological_order() if isinstance(v.operator, SqlOperator)]
    tree = sqlglot.parse_one(composed_sql(graph, tiny_tables), read="spark")
    ctes = [cte.alias for cte in tree.args["with_"].expressions]
    assert ctes == [f"v_{n}" for n in range(len(pieces))]
    assert tree.args["from_"].this.name == ctes[-1]  # the vertex before the sink
    read = {t.name for t in tree.find_all(exp.Table) if not t.find_ancestor(exp.Hint)}
    assert read == {"shop_orders", "shop_items", *ctes}  # no view of a task is left
    hints = [
        h.sql("spark")
        for piece in pieces
        for h in sqlglot.parse_one(piece.operator.sql, read="spark").find_all(exp.JoinHint)
    ]
    assert sorted(h.sql("spark") for h in tree.find_all(exp.JoinHint)) == sorted(hints)
    joined = [v for v in pieces if len(v.inputs) == 2]  # a join of two edges: shuffled
    assert [str(e.partitioner) for v in joined for e in v.inputs] == (
        ["hash(k_2)", "hash(k)"] if config else []
    )


def test_a_source_is_read_narrowed_to_its_columns_under_its_view_name(tiny_tables, tmp_path):
    graph = JobGraph("hand-built")
    scan = graph.add_vertex(
        "scan",
        operator=SqlOperator("SELECT s0.k FROM s0", ("s0",)),
        sources=[FileSource(tiny_tables["shop_orders"], columns=["k", "flag"])],
    )
    count = graph.add_vertex(
        "count",
        operator=SqlOperator(
            "SELECT /*+ BROADCAST(in1) */ COUNT(*) AS n FROM in0 JOIN in1 ON in0.k = in1.k",
            ("in0", "in1"),
        ),
    )
    graph.connect(scan, count, Partitioner.hash("k"))
    graph.connect(scan, count, Partitioner.BROADCAST)
    graph.connect(count, graph.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out"))))
    composed = sqlglot.transpile(composed_sql(graph), read="spark")[0]  # on one line
    assert "FROM (SELECT `k`, `flag` FROM `shop_orders`) AS s0" in composed
    assert "BROADCAST(in1)" in composed and "FROM v_0 AS in0 JOIN v_0 AS in1" in composed
    assert composed.endswith("SELECT * FROM v_1")


def test_a_vertex_that_is_no_sql_is_refused_by_name(tiny_tables, tmp_path):
    graph = JobGraph("functions")
    scan = graph.add_vertex(
        "scan",
        sources=[FileSource(tiny_tables["shop_orders"])],
        operator=spark(lambda frame: frame),
    )
    graph.connect(scan, graph.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out"))))
    with pytest.raises(ValueError, match=r"vertex 'scan' runs spark\(<lambda>\), not SQL"):
        composed_sql(graph)


def test_a_source_outside_the_tables_is_refused(tiny_tables, tmp_path):
    graph = _planned(tiny_tables, tmp_path).graph
    with pytest.raises(ValueError, match="not one of the tables"):
        composed_sql(graph, {"shop_orders": tiny_tables["shop_orders"]})


@pytest.fixture(scope="module")
def tpch(tmp_path_factory):
    from examples.tpch_dbgen import generate

    data = tmp_path_factory.mktemp("tpch-sf0.01")
    return str(data), generate(data, 0.01)


@pytest.fixture(scope="module")
def tpch_views(tpch, spark_session):
    register_views(spark_session, tpch[1])
    return spark_session


# a few plans of each shape (the benchmark checks all 22 at every run): joins broadcast and
# read whole (q03, q09), a semi join on an aggregate (q18), semi and anti joins (q21); shuffled,
# the biggest plans (q02: 21 vertices, q08: 18)
_TPCH = [*((n, None) for n in (3, 9, 18, 21)), *((n, SHUFFLED) for n in (2, 8))]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("number", "config"),
    _TPCH,
    ids=[f"q{n:02d}-{'shuffled' if c else 'planned'}" for n, c in _TPCH],
)
def test_tpch_on_the_same_plan_gives_duckdbs_answer(tpch, tpch_views, number, config):
    from examples.tpch_dbgen import duckdb_answer, queries

    data, tables = tpch
    text = queries()[number]
    frame = spark_on_same_plan(tpch_views, text, tables, config, register=False)
    difference = sql_difference(
        frame.toArrow(), duckdb_answer(data, text), ordered=query_is_ordered(text)
    )
    assert difference is None, f"q{number}: {difference}\n{planned_sql(text, tables, config)}"


@pytest.mark.spark
def test_the_tables_read_are_registered_when_asked(tiny_tables, spark_session):
    for name in tiny_tables:
        spark_session.catalog.dropTempView(name)
    frame = spark_on_same_plan(spark_session, _QUERY, tiny_tables)
    assert [tuple(row) for row in frame.collect()] == [(4, 15.0, 3), (1, 3.0, 2), (3, 3.0, 1)]
    full = (
        "SELECT o.k, i.v FROM shop_orders o FULL JOIN shop_items i ON o.k = i.k "
        "WHERE i.v IS NULL OR i.v > 4"
    )  # Spark broadcasts no side of a full join
    assert "SHUFFLE_HASH" in planned_sql(full, tiny_tables, SHUFFLED)
    frame = spark_on_same_plan(spark_session, full, tiny_tables, SHUFFLED, register=False)
    assert sorted(tuple(row) for row in frame.collect()) == [(2, None), (4, 5.0), (4, 6.0)]
