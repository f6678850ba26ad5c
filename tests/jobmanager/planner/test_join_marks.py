"""The planner's marks on shuffled joins (FLIP-470: the JobManager may broadcast a side at run
time) and ``table.optimizer.adaptive-broadcast-join.strategy``. Planning only, except the
last tests, which run a marked join stage's SQL in DuckDB over one side whole and the other in
slices, as a run-time broadcast reads them."""

from __future__ import annotations

from collections import Counter

import pytest

from jobmanager.errors import ConfigurationError
from jobmanager.model.config import Configuration
from jobmanager.model.operators import ParquetSink
from jobmanager.planner import plan_sql
from jobmanager.planner.physical.joinmarks import STRATEGY, broadcast_strategy

THRESHOLD = "table.optimizer.join.broadcast-threshold"
HASH_EVERYTHING = {THRESHOLD: -1}
BROADCAST_EVERYTHING = {THRESHOLD: "1 gb", "table.optimizer.join.read-whole-threshold": -1}
SINK = ParquetSink("/tmp/tidal-planner-tests-out", overwrite=True)


def config(values=None, strategy: str | None = None) -> Configuration:
    return Configuration({**(values or {}), **({STRATEGY: strategy} if strategy else {})})


def plan(catalog, query: str, values=None, strategy: str | None = None):
    return plan_sql(query, catalog, SINK, config(values, strategy))


def marks(planned) -> dict[str, tuple]:
    """Each marked edge's source: (join id, kind, side, redistributable)."""
    return {
        e.source.name: (e.join.join, e.join.kind, e.join.side, e.join.redistributable)
        for e in planned.graph.edges
        if e.join is not None
    }


def all_sql(planned) -> dict[str, str]:
    return {v.name: v.operator.sql for v in planned.graph.vertices if v.name != "result"}


def edges(planned) -> dict[tuple[str, str], str]:
    return {(e.source.name, e.target.name): str(e.partitioner) for e in planned.graph.edges}


# dims as x, not d: facts has a column d, and a LEFT SEMI JOIN's ON then reads d.k as a field
# of it (a qualification bug of its own, not the marks')
JOINS = "SELECT f.s FROM facts f {} dims x ON f.k = x.k"
SUBQUERY = "SELECT f.s FROM facts f WHERE {} (SELECT 1 FROM dims x WHERE x.k = f.k)"


@pytest.mark.parametrize(
    "query, kind",
    [
        (JOINS.format("JOIN"), "inner"),
        (JOINS.format("LEFT OUTER JOIN"), "left"),
        (JOINS.format("RIGHT JOIN"), "right"),
        (JOINS.format("FULL OUTER JOIN"), "full"),
        (JOINS.format("LEFT SEMI JOIN"), "semi"),
        (JOINS.format("LEFT ANTI JOIN"), "anti"),
        (SUBQUERY.format("EXISTS"), "semi"),
        (SUBQUERY.format("NOT EXISTS"), "anti"),
        ("SELECT f.s FROM facts f WHERE f.k IN (SELECT k FROM dims x)", "semi"),
    ],
)
def test_both_sides_of_a_shuffled_join_carry_its_id_kind_and_side(catalog, query, kind):
    planned = plan(catalog, query, HASH_EVERYTHING)
    assert marks(planned) == {
        "scan facts f": ("j1", kind, "left", True),
        "scan dims x": ("j1", kind, "right", True),
    }, planned.explain()
    join = next(v for v in planned.graph.vertices if v.name.startswith("join"))
    assert {e.join.join for e in join.inputs} == {"j1"}


def test_explain_shows_the_mark_and_the_side_that_may_be_broadcast(catalog):
    text = plan(catalog, JOINS.format("LEFT JOIN"), HASH_EVERYTHING).explain()
    assert "<- scan facts f: hash(k), splittable, join j1 left, left side\n" in text
    assert "<- scan dims x: hash(k_2), join j1 left, right side (may broadcast)\n" in text


def test_each_shuffled_join_of_a_job_has_its_own_id(catalog):
    planned = plan(
        catalog,
        "SELECT f.s FROM facts f JOIN dims d ON f.k = d.k JOIN others o ON o.k = f.g",
        HASH_EVERYTHING,
    )
    got = marks(planned)
    assert Counter(join for join, *_ in got.values()) == {"j1": 2, "j2": 2}, planned.explain()
    second = [e for e in planned.graph.edges if e.join is not None and e.join.join == "j2"]
    assert {e.join.side for e in second} == {"left", "right"}
    assert {e.source.name for e in second} == {"join k", "scan others o"}


def test_not_redistributable_when_a_later_step_of_the_stage_relies_on_the_hashing(catalog):
    planned = plan(
        catalog,
        "SELECT f.k, COUNT(*) AS n FROM facts f JOIN dims d ON f.k = d.k GROUP BY f.k",
        HASH_EVERYTHING,
    )
    assert marks(planned) == {
        "scan facts f": ("j1", "inner", "left", False),
        "scan dims d": ("j1", "inner", "right", False),
    }


def test_no_mark_where_a_third_input_is_hashed_into_the_joins_stage(catalog):
    """Three inputs hashed on one key meet in one stage: turning one pair into a broadcast
    join would still need the third read by subpartition, so none is marked."""
    planned = plan(
        catalog,
        "SELECT f.s FROM facts f JOIN dims d ON f.k = d.k JOIN others o ON o.k = f.k",
        HASH_EVERYTHING,
    )
    (join,) = [v for v in planned.graph.vertices if v.name.startswith("join")]
    assert len(join.inputs) == 3 and all(str(e.partitioner).startswith("hash") for e in join.inputs)
    assert marks(planned) == {}


def test_no_mark_where_a_side_is_deduplicated_in_the_joins_stage(catalog):
    """IN over a DISTINCT subquery hashed on the key: the dedup runs in the join's stage, per
    task, and is right only while both sides are hashed alike, so the join is not marked."""
    planned = plan(
        catalog,
        "SELECT f.s FROM facts f WHERE f.k IN (SELECT DISTINCT k FROM dims)",
        HASH_EVERYTHING,
    )
    assert marks(planned) == {}, planned.explain()


def test_a_broadcast_into_a_marked_join_stage_does_not_count_as_a_hash_input(tmp_path):
    catalog = _three_sizes(tmp_path)
    planned = plan(
        catalog,
        "SELECT l.v, c.c FROM lines l JOIN orders o ON l.k = o.k "
        "LEFT JOIN customers c ON o.c = c.c",
        {THRESHOLD: "4 kb"},
    )
    assert edges(planned)[("scan customers c", "join k")] == "broadcast", planned.explain()
    assert marks(planned) == {
        "scan lines l": ("j1", "inner", "left", True),
        "scan orders o": ("j1", "inner", "right", True),
    }


def test_none_marks_nothing_and_plans_as_before(catalog):
    query = "SELECT f.s FROM facts f JOIN dims d ON f.k = d.k LEFT JOIN others o ON o.k = f.g"
    for values in (HASH_EVERYTHING, BROADCAST_EVERYTHING, {}):
        planned = plan(catalog, query, values, "NONE")
        assert marks(planned) == {}
        assert edges(planned) == edges(plan(catalog, query, values, "AUTO"))
        assert all_sql(planned) == all_sql(plan(catalog, query, values, "AUTO"))


def test_auto_is_the_default_and_keeps_the_listings_static_broadcasts(catalog):
    query = "SELECT f.s, d.name FROM facts f JOIN dims d ON f.k = d.k"
    default = plan(catalog, query, BROADCAST_EVERYTHING)
    auto = plan(catalog, query, BROADCAST_EVERYTHING, "auto")
    assert (
        edges(default)
        == edges(auto)
        == {("scan dims d", "scan facts f"): "broadcast", ("scan facts f", "result"): "forward"}
    )
    assert marks(default) == marks(auto) == {}  # a static broadcast join is not marked
    assert broadcast_strategy(Configuration()) == "AUTO"


def test_runtime_only_shuffles_an_equi_join_whose_side_is_listed_small(catalog):
    planned = plan(
        catalog,
        "SELECT f.s, d.name FROM facts f JOIN dims d ON f.k = d.k",
        BROADCAST_EVERYTHING,
        "RUNTIME_ONLY",
    )
    assert "broadcast" not in edges(planned).values()
    assert marks(planned) == {
        "scan facts f": ("j1", "inner", "left", True),
        "scan dims d": ("j1", "inner", "right", True),
    }


def test_runtime_only_still_broadcasts_joins_without_equality_keys(catalog):
    for query in (
        "SELECT f.s, d.name FROM facts f JOIN dims d ON f.k < d.k",
        "SELECT f.s, d.name FROM facts f CROSS JOIN dims d",
        "SELECT s FROM facts WHERE d > (SELECT AVG(d) FROM facts)",
    ):
        planned = plan(catalog, query, BROADCAST_EVERYTHING, "RUNTIME_ONLY")
        assert "broadcast" in edges(planned).values(), query
        assert marks(planned) == {}


def test_the_strategy_reads_any_spelling_and_refuses_others():
    assert broadcast_strategy({STRATEGY: "runtime-only"}) == "RUNTIME_ONLY"
    assert broadcast_strategy({STRATEGY: "None"}) == "NONE"
    assert broadcast_strategy({}) == "AUTO"
    with pytest.raises(ConfigurationError):
        broadcast_strategy({STRATEGY: "sometimes"})


@pytest.mark.parametrize(
    "query",
    [
        JOINS.format("JOIN"),
        JOINS.format("LEFT JOIN"),
        JOINS.format("RIGHT JOIN"),
        JOINS.format("LEFT SEMI JOIN"),
        JOINS.format("FULL JOIN"),
        "SELECT f.s FROM facts f LEFT ANTI JOIN others x ON f.k = x.k",  # half the keys in others
        "SELECT f.s FROM facts f WHERE NOT EXISTS (SELECT 1 FROM others x WHERE x.k = f.k "
        + "AND x.w > f.v)",
        "SELECT f.k, COUNT(*) AS n FROM facts f JOIN dims x ON f.k = x.k GROUP BY f.k",
        "SELECT f.s, x.name FROM facts f JOIN dims x ON f.k = x.k AND f.g < x.k",
        "SELECT f.s FROM facts f WHERE f.g NOT IN (SELECT x.k FROM dims x WHERE x.k = f.k)",
    ],
)
def test_a_marked_joins_sql_is_right_with_either_side_whole_and_the_other_in_any_slices(
    catalog, query
):
    """What a run-time broadcast does to the join's task: the side that may be broadcast is
    read whole, the other in slices, not by key (here every third row) where the mark says
    ``redistributable``, else still by its hash key; the task's SQL, run once per slice, must
    give the rows it gives over both sides whole."""
    duckdb = pytest.importorskip("duckdb")
    planned = plan(catalog, query, HASH_EVERYTHING)
    (join,) = [v for v in planned.graph.vertices if v.inputs and v.inputs[0].join is not None]
    rows = {e.source.name: _run(duckdb, e.source, {}) for e in join.inputs}
    views = [rows[e.source.name] for e in join.inputs]
    whole = _rows(_run(duckdb, join, {"in0": views[0], "in1": views[1]}))
    assert whole, "a join with no rows checks nothing"
    for index, edge in enumerate(join.inputs):
        if not edge.join.may_be_broadcast:
            continue
        other = 1 - index
        got = Counter()
        for start in range(3):
            sliced = views[other].filter(_slice(views[other], join.inputs[other], start))
            got += _rows(_run(duckdb, join, {f"in{index}": views[index], f"in{other}": sliced}))
        assert got == whole, f"{edge.source.name} broadcast"


def _slice(table, edge, start: int):
    """Every third row from ``start``, or the rows whose keys hash to ``start`` of three
    where the join's stage relies on its inputs being hashed alike."""
    import pyarrow as pa

    if edge.join.redistributable:
        return pa.array([i % 3 == start for i in range(table.num_rows)], pa.bool_())
    keys = zip(*(table.column(key).to_pylist() for key in edge.partitioner.keys))
    return pa.array([hash(key) % 3 == start for key in keys], pa.bool_())


def _rows(table) -> Counter:
    return Counter(tuple(row.values()) for row in table.to_pylist())


def _run(duckdb, vertex, views: dict):
    """``vertex``'s SQL in DuckDB over ``views`` (a scan's sources as s0, s1, ...)."""
    import pyarrow.parquet as pq
    import sqlglot

    connection = duckdb.connect()
    for index, source in enumerate(vertex.sources):
        views[f"s{index}"] = pq.read_table(source.paths[0], columns=list(source.columns))
    for name, table in views.items():
        connection.register(name, table)
    sql = sqlglot.transpile(vertex.operator.sql, read="spark", write="duckdb")[0]
    try:
        return connection.execute(sql).to_arrow_table()
    finally:
        connection.close()


def _three_sizes(tmp_path):
    import pyarrow as pa

    from jobmanager.planner import Catalog
    from tests.jobmanager.planner.conftest import write_table

    return Catalog.from_tables(
        {
            "lines": write_table(
                tmp_path / "lines", pa.table({"k": list(range(4000)), "v": list(range(4000))})
            ),
            "orders": write_table(
                tmp_path / "orders",
                pa.table({"k": list(range(2000)), "c": [i % 50 for i in range(2000)]}),
            ),
            "customers": write_table(tmp_path / "customers", pa.table({"c": list(range(50))})),
        }
    )
