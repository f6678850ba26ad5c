"""The planner's job graphs from small SQL: where the exchanges go, what each vertex reads,
which vertices chain, where the halves of an aggregate sit, and which join kinds survive.
Planning only: nothing here runs a query (``test_answers.py`` runs them)."""

from __future__ import annotations

import pytest

from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.chaining import decide_chains
from jobmanager.model.config import BROADCAST_THRESHOLD, READ_WHOLE_THRESHOLD, Configuration
from jobmanager.model.joins import PlannedJoin
from jobmanager.model.operators import ParquetSink, SqlOperator
from jobmanager.model.sources import FileSource
from jobmanager.planner import plan_sql

HASH_EVERYTHING = {BROADCAST_THRESHOLD.key: -1}
# each broadcast side a vertex of its own, however tiny (its tasks' reading it themselves is
# tested on its own)
OWN_VERTICES = {READ_WHOLE_THRESHOLD.key: -1}
BROADCAST_EVERYTHING = {BROADCAST_THRESHOLD.key: "1 gb", **OWN_VERTICES}


def plan(catalog, query: str, config=None):
    return plan_sql(
        query,
        catalog,
        ParquetSink("/tmp/tidal-planner-tests-out", overwrite=True),
        Configuration(config or {}),
    )


def edges(planned) -> dict[tuple[str, str], str]:
    return {(e.source.name, e.target.name): str(e.partitioner) for e in planned.graph.edges}


def sql_of(planned, name: str) -> str:
    operator = planned.graph.vertex(name).operator
    assert isinstance(operator, SqlOperator)
    return operator.sql


def all_sql(planned) -> str:
    return "\n".join(
        v.operator.sql for v in planned.graph.vertices if isinstance(v.operator, SqlOperator)
    )


def test_an_aggregate_is_partial_in_the_producers_task_and_final_after_a_hash_exchange(catalog):
    planned = plan(catalog, "SELECT g, SUM(v) AS total, COUNT(*) AS n FROM facts GROUP BY g")
    assert edges(planned) == {
        ("scan facts", "partial aggregate"): "forward",
        ("partial aggregate", "aggregate g"): "hash(g)",
        ("aggregate g", "result"): "forward",
    }
    assert decide_chains(planned.graph) == (
        ("scan facts", "partial aggregate"),
        ("aggregate g", "result"),
    )
    (exchange,) = [e for e in planned.graph.edges if e.target.name == "aggregate g"]
    assert exchange.pre_aggregated  # so a scan of one task takes the final aggregate too:
    assert decide_chains(planned.graph, one_task={"scan facts"}) == (
        ("scan facts", "partial aggregate", "aggregate g", "result"),
    )
    assert "<- partial aggregate: hash(g), pre-aggregated" in planned.explain()
    assert not any(e.pre_aggregated for e in planned.graph.edges if e is not exchange)
    assert "GROUP BY" in sql_of(planned, "partial aggregate")
    assert "SUM(`v`)" in sql_of(planned, "partial aggregate")
    final = sql_of(planned, "aggregate g")
    assert "SUM(`_p`)" in final and "CAST(" in final  # the sum of sums, cast back
    assert planned.columns == ("g", "total", "n")


def test_sum_and_avg_of_decimals_give_sparks_types(catalog):
    planned = plan(
        catalog,
        "SELECT SUM(v) AS s, AVG(v) AS a, AVG(k) AS ak, SUM(k) AS sk, "
        "COUNT(DISTINCT s) AS c FROM facts",
    )
    assert planned.schema == (
        ("s", "decimal(25,2)"),
        ("a", "decimal(19,6)"),
        ("ak", "double"),
        ("sk", "bigint"),
        ("c", "bigint"),
    )
    final = sql_of(planned, "aggregate")
    assert "AS DECIMAL(25, 2)" in final and "AS DECIMAL(19, 6)" in final
    assert planned.graph.vertex("aggregate").parallelism == 1  # a global aggregate: one task


def test_count_distinct_sends_each_distinct_value_once(catalog):
    planned = plan(catalog, "SELECT g, COUNT(DISTINCT s) AS c, SUM(v) AS t FROM facts GROUP BY g")
    partial = sql_of(planned, "partial aggregate")
    assert "GROUP BY" in partial and "`s`" in partial.split("GROUP BY")[1]
    assert "COUNT(DISTINCT" in sql_of(planned, "aggregate g")
    assert edges(planned)[("partial aggregate", "aggregate g")] == "hash(g)"


def test_a_small_side_is_sent_whole_into_the_scan_of_the_big_one(catalog):
    planned = plan(
        catalog, "SELECT f.s, d.name FROM facts f JOIN dims d ON f.k = d.k", BROADCAST_EVERYTHING
    )
    assert edges(planned) == {
        ("scan dims d", "scan facts f"): "broadcast",
        ("scan facts f", "result"): "forward",
    }
    sql = sql_of(planned, "scan facts f")
    assert "BROADCAST(" in sql and "INNER JOIN in0" in sql


def test_a_tiny_small_side_is_read_whole_by_the_tasks_of_the_scan_it_joins(catalog):
    """Under ``table.optimizer.join.read-whole-threshold`` (1 MiB) a broadcast side that only
    reads a table is no vertex of its own: the big side's tasks read it, in their Spark query."""
    query = "SELECT f.s, d.name FROM facts f JOIN dims d ON f.k = d.k AND d.name <> 'x'"
    planned = plan(catalog, query, {BROADCAST_THRESHOLD.key: "1 gb"})
    assert edges(planned) == {("scan facts f", "result"): "forward"}
    scan = planned.graph.vertex("scan facts f")
    split, whole = scan.sources
    assert isinstance(split, FileSource) and isinstance(whole, BroadcastSource)
    assert whole.source.paths[0].endswith("dims") and whole.source.columns == ("k", "name")
    assert scan.infers_parallelism  # the split source still sizes the vertex
    sql = sql_of(planned, "scan facts f")
    assert "FROM s1" in sql and "BROADCAST(" in sql and "'x'" in sql
    (join,) = scan.operator.joins
    assert join.strategy == PlannedJoin.BROADCAST and join.side == "right"
    listed = catalog.table("dims").listed_bytes(["k", "name"])
    over = plan(
        catalog,
        query,
        {
            BROADCAST_THRESHOLD.key: "1 gb",
            READ_WHOLE_THRESHOLD.key: listed - 1,
        },
    )
    assert edges(over)[("scan dims d", "scan facts f")] == "broadcast"
    aggregated = plan(
        catalog,
        "SELECT f.s, d.n FROM facts f JOIN (SELECT k, COUNT(*) AS n "
        "FROM dims GROUP BY k) d ON f.k = d.k",
        {BROADCAST_THRESHOLD.key: "1 gb"},
    )
    assert "broadcast" in edges(aggregated).values()  # not a plain read: a stage of its own


def test_a_tiny_table_is_read_whole_after_an_exchange_but_not_into_a_join_the_run_time_may_turn(
    catalog,
):
    """TPC-H q02's outer join runs in the stage of an aggregate, which reads no table: its tiny
    tables are read whole there too. A shuffled join's stage (two hashed sides) keeps them as
    vertices: the run time may broadcast one of its sides, or chain it into a side's scan,
    only in a vertex that reads no table."""
    config = {BROADCAST_THRESHOLD.key: "1 gb"}
    planned = plan(
        catalog,
        "SELECT a.k, a.t, d.name FROM (SELECT k, SUM(v) AS t FROM facts "
        "GROUP BY k) a JOIN dims d ON a.k = d.k",
        config,
    )
    assert "scan dims d" not in {v.name for v in planned.graph.vertices}, planned.explain()
    (stage,) = [
        v for v in planned.graph.vertices if any(isinstance(s, BroadcastSource) for s in v.sources)
    ]
    assert stage.name.startswith("aggregate") and len(stage.sources) == 1
    assert [str(e.partitioner) for e in stage.inputs] == ["hash(k)"]
    assert "FROM s0" in sql_of(planned, stage.name)

    facts = catalog.table("facts").listed_bytes(["k", "s"])
    hashed = plan(
        catalog,
        "SELECT f.s, g.s AS t, d.name FROM facts f JOIN facts g ON f.k = g.k "
        "JOIN dims d ON d.k = f.g + g.g",
        {BROADCAST_THRESHOLD.key: facts - 1},
    )
    join = next(v for v in hashed.graph.vertices if v.name.startswith("join"))
    assert edges(hashed).get(("scan dims d", join.name)) == "broadcast", hashed.explain()
    assert not join.sources


@pytest.mark.parametrize(
    "kind, splittable",
    [
        ("JOIN", {"scan facts f": True, "scan dims d": True}),
        ("LEFT JOIN", {"scan facts f": True, "scan dims d": False}),
        ("RIGHT JOIN", {"scan facts f": False, "scan dims d": True}),
        ("FULL JOIN", {"scan facts f": False, "scan dims d": False}),
    ],
)
def test_large_sides_are_hashed_on_their_keys_and_splittable_as_the_kind_allows(
    catalog, kind, splittable
):
    planned = plan(
        catalog, f"SELECT f.s, d.name FROM facts f {kind} dims d ON f.k = d.k", HASH_EVERYTHING
    )
    join = next(v for v in planned.graph.vertices if v.name.startswith("join"))
    got = {e.source.name: (str(e.partitioner), e.splittable) for e in join.inputs}
    assert got == {
        "scan facts f": ("hash(k)", splittable["scan facts f"]),
        "scan dims d": ("hash(k_2)", splittable["scan dims d"]),
    }
    keyword = {
        "JOIN": "INNER JOIN",
        "LEFT JOIN": "LEFT OUTER JOIN",
        "RIGHT JOIN": "RIGHT OUTER JOIN",
        "FULL JOIN": "FULL OUTER JOIN",
    }[kind]
    assert keyword in sql_of(planned, join.name)


def test_an_aggregate_by_the_join_key_needs_no_second_exchange(catalog):
    planned = plan(
        catalog,
        "SELECT f.k, SUM(f.v) AS t FROM facts f JOIN dims d ON f.k = d.k GROUP BY f.k",
        HASH_EVERYTHING,
    )
    join = next(v for v in planned.graph.vertices if v.name.startswith("join"))
    assert "GROUP BY" in join.operator.sql  # aggregated where the join put the keys
    assert not any(v.name.startswith(("aggregate", "partial")) for v in planned.graph.vertices)
    assert not any(e.splittable for e in join.inputs)  # the aggregate relies on its partitioning


def test_keys_of_different_types_are_cast_to_one_before_hashing(catalog):
    planned = plan(
        catalog, "SELECT f.s, o.w FROM facts f JOIN others o ON f.v = o.w", HASH_EVERYTHING
    )
    scans = [v for v in planned.graph.vertices if v.name.startswith("scan")]
    assert all("AS DECIMAL(16, 3)" in v.operator.sql for v in scans)


def test_exists_with_a_residual_condition_stays_a_semi_join(catalog):
    planned = plan(
        catalog,
        "SELECT f.s FROM facts f WHERE EXISTS (SELECT * FROM dims d "
        "WHERE d.k = f.k AND d.name <> f.s)",
        HASH_EVERYTHING,
    )
    join = next(v for v in planned.graph.vertices if v.name.startswith("join"))
    assert "LEFT SEMI JOIN" in join.operator.sql
    assert "<>" in join.operator.sql.split("LEFT SEMI JOIN")[-1]
    assert "COLLECT_LIST" not in all_sql(planned) and "LEFT OUTER" not in all_sql(planned)


def test_not_exists_is_an_anti_join_and_not_in_a_null_aware_one(catalog):
    anti = plan(
        catalog, "SELECT f.s FROM facts f WHERE NOT EXISTS (SELECT 1 FROM dims d WHERE d.k = f.k)"
    )
    assert "LEFT ANTI JOIN" in all_sql(anti)
    not_in = plan(catalog, "SELECT f.s FROM facts f WHERE f.k NOT IN (SELECT k FROM dims)")
    sql = all_sql(not_in)
    assert "LEFT ANTI JOIN" in sql and "IS NULL" in sql.split("LEFT ANTI JOIN")[1]


def test_a_cte_used_twice_is_one_vertex_with_two_consumers(catalog):
    planned = plan(
        catalog,
        """
        WITH totals AS (SELECT g, SUM(v) AS t FROM facts GROUP BY g)
        SELECT a.g, a.t FROM totals a WHERE a.t = (SELECT MAX(t) FROM totals)""",
    )
    producers = [v for v in planned.graph.vertices if v.name == "aggregate g"]
    assert len(producers) == 1 and len(producers[0].outputs) == 2
    assert sum(v.name.startswith("scan facts") for v in planned.graph.vertices) == 1


def test_a_scalar_subquery_is_a_one_row_broadcast_input(catalog):
    planned = plan(catalog, "SELECT s FROM facts WHERE v > (SELECT AVG(v) FROM facts)")
    (edge,) = [e for e in planned.graph.edges if str(e.partitioner) == "broadcast"]
    assert edge.source.name == "aggregate" and edge.source.parallelism == 1
    assert edge.target.name.startswith("scan facts")
    assert "FROM in0" in edge.target.operator.sql  # a scalar subquery over the one row


def test_a_scan_reads_only_its_columns_with_its_filter_and_prunes_partitions(catalog):
    planned = plan(catalog, "SELECT s FROM facts WHERE g = 3 AND d > 10")
    (source,) = planned.graph.vertex("scan facts").sources
    assert set(source.columns) == {"s", "g", "d"}
    assert "WHERE" in sql_of(planned, "scan facts")
    events = plan(catalog, "SELECT id FROM events WHERE day >= DATE'2024-01-02'")
    (source,) = events.graph.vertex("scan events").sources
    assert source.partition_filter == (("day", "date", ">=", ("2024-01-02",)),)
    assert [f.partition_values for f in source.splits(1 << 30)] == [
        (("day", "2024-01-02"),),
        (("day", "2024-01-03"),),
    ]


def test_order_by_with_limit_is_a_top_n_per_task_then_one_task(catalog):
    planned = plan(catalog, "SELECT s, v FROM facts ORDER BY v DESC LIMIT 5")
    assert edges(planned) == {
        ("scan facts", "top-n per task 5"): "forward",
        ("top-n per task 5", "top-n 5"): "rebalance",
        ("top-n 5", "result"): "forward",
    }
    assert planned.graph.vertex("top-n 5").parallelism == 1
    assert "LIMIT 5" in sql_of(planned, "top-n per task 5")


def test_the_final_order_by_sorts_by_key_ranges_in_tasks_decided_at_run_time(catalog):
    planned = plan(catalog, "SELECT s FROM facts ORDER BY s")
    assert planned.graph.vertex("sort").parallelism is None
    assert edges(planned)[("scan facts", "sort")] == "range(s ASC NULLS FIRST)"


def test_a_window_partition_is_a_hash_exchange(catalog):
    planned = plan(
        catalog, "SELECT s, SUM(v) OVER (PARTITION BY g ORDER BY d) AS running FROM facts"
    )
    assert edges(planned)[("scan facts", "window g")] == "hash(g)"
    assert "OVER (PARTITION BY `g` ORDER BY `d`" in sql_of(planned, "window g")


def test_set_operations(catalog):
    union_all = plan(catalog, "SELECT k FROM dims UNION ALL SELECT k FROM others")
    assert sorted(edges(union_all).values()) == ["forward", "rebalance", "rebalance"]
    assert "UNION ALL" in sql_of(union_all, "union all")
    intersect = plan(catalog, "SELECT k FROM dims INTERSECT SELECT k FROM others")
    assert {kind for (_, target), kind in edges(intersect).items() if target == "intersect"} == {
        "hash(k)",
        "hash(k_2)",
    }
    widened = plan(catalog, "SELECT k FROM facts UNION ALL SELECT k FROM dims")
    assert widened.schema == (("k", "bigint"),)


def test_explain_shows_each_vertex_with_its_sql_and_origin(catalog):
    text = plan(catalog, "SELECT g, SUM(v) AS total FROM facts WHERE d > 1 GROUP BY g").explain()
    assert "scan facts (parallelism decided at run time)" in text
    assert "from the query: FROM facts" in text and "GROUP BY" in text
    assert "<- partial aggregate: hash(g)" in text


def test_an_order_by_over_values_sorts_by_what_the_values_hold(catalog):
    """The result's renaming replaces the aliases an ORDER BY in the same SELECT named (the
    shape a DataFrame's ``createDataFrame(...).orderBy(...)`` plans into): the keys must be
    the values' own expressions then, or Spark cannot resolve them."""
    import sqlglot
    from sqlglot import exp

    planned = plan(
        catalog,
        "SELECT CAST(a AS INT) AS a, b FROM VALUES (2, 'x'), (1, NULL) "
        "AS v(a, b) ORDER BY a, b DESC",
    )
    select = sqlglot.parse_one(sql_of(planned, "values"), read="spark")
    keys = {column.name for column in select.args["order"].find_all(exp.Column)}
    assert keys == {"a", "b"}


def test_selectivity_is_guessed_as_calcite_guesses_it_without_statistics():
    from sqlglot import parse_one

    from jobmanager.planner.rules.selectivity import guess_selectivity

    def guess(*conditions: str) -> float:
        return guess_selectivity([parse_one(c, read="spark") for c in conditions])

    assert guess() == 1.0
    assert guess("a = 1") == pytest.approx(0.15)
    assert guess("d >= '1994-01-01'", "d < '1995-01-01'") == pytest.approx(0.25)
    assert guess("a IS NOT NULL") == pytest.approx(0.9)
    assert guess("name LIKE '%green%'") == pytest.approx(0.25)
    assert guess("a = 1 OR a = 2") == pytest.approx(0.3)
    assert guess("(a = 1 AND b > 2) OR c LIKE 'x%' OR d IN (1, 2) OR e = 3") == pytest.approx(
        0.15 * 0.5 + 0.25 + 0.25 + 0.15
    )
    assert guess("a > 1 OR b > 2 OR c > 3") == 1.0  # at most every row
