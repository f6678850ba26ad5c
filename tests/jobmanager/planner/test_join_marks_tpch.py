"""TPC-H queries planned with every equi-join shuffled and marked (RUNTIME_ONLY), each stage's
SQL run in DuckDB over the real tables (dbgen, scale 0.01): a marked join's stage gives the
same rows with a side it may broadcast read whole and the other side in any slices (by key
where the mark is not ``redistributable``), which is what a run-time broadcast join reads.
The queries are the shapes that matter (all 22 pass; the others add seconds, not shapes): an
inner chain (Q3), a left outer join aggregated on its key in the join's stage (Q13), an
aggregate co-partitioned with a join's output (Q17), a semi join under an aggregate by the key
(Q18), semi and anti joins with residual conditions (Q21), an anti join beside a scalar
subquery (Q22)."""

from __future__ import annotations

from collections import Counter

import pytest

from examples.tpch_dbgen import queries
from jobmanager.model.config import BROADCAST_THRESHOLD, READ_WHOLE_THRESHOLD, RULES_DISABLED
from jobmanager.planner import Catalog
from tests.jobmanager.planner.test_join_marks import _rows, _slice, plan

duckdb = pytest.importorskip("duckdb")


@pytest.fixture(scope="module")
def tpch(tmp_path_factory) -> Catalog:
    from examples.tpch_dbgen import generate

    return Catalog.from_tables(generate(tmp_path_factory.mktemp("tpch-marks"), 0.01))


@pytest.mark.parametrize("number", [3, 13, 17, 18, 21, 22], ids=lambda n: f"q{n:02d}")
def test_marked_joins_of_tpch_give_their_rows_when_a_side_is_broadcast(tpch, number, monkeypatch):
    import jobmanager.planner

    # q13's orders are counted before the join (eager_aggregates), no join marked
    values = {RULES_DISABLED.key: "aggregate-before-joins"} if number == 13 else {}
    planned = plan(tpch, queries()[number], values, "RUNTIME_ONLY")
    monkeypatch.setattr(jobmanager.planner, "mark_joins", lambda result, strategy: 0)
    unmarked = plan(tpch, queries()[number], values, "RUNTIME_ONLY")
    assert unmarked.explain() == _unmarked(planned.explain())  # marks change no edge, no SQL
    produced, checked = {}, 0
    for vertex in planned.graph.topological_order()[:-1]:  # the sink last
        views = {f"in{i}": produced[e.source.name] for i, e in enumerate(vertex.inputs)}
        produced[vertex.name] = _run(vertex, views)
        marked = [i for i, e in enumerate(vertex.inputs) if e.join is not None]
        if not marked:
            continue
        assert len(marked) == 2 and len({vertex.inputs[i].join.join for i in marked}) == 1
        whole = _rows(produced[vertex.name])
        for index in marked:
            if vertex.inputs[index].join.may_be_broadcast:
                (other,) = set(marked) - {index}
                assert _broadcast(vertex, views, other) == whole, vertex.inputs[index]
                checked += 1
    assert checked, planned.explain()


def _broadcast(vertex, views: dict, other: int) -> Counter:
    """The stage's rows with input ``other`` cut in three slices, every other input whole."""
    got = Counter()
    for start in range(3):
        table = views[f"in{other}"]
        sliced = dict(
            views, **{f"in{other}": table.filter(_slice(table, vertex.inputs[other], start))}
        )
        got += _rows(_run(vertex, sliced))
    return got


def _run(vertex, views: dict):
    """``vertex``'s SQL in DuckDB over ``views`` and its sources (as s0, s1, ...)."""
    import pyarrow.dataset as ds
    import sqlglot

    connection = duckdb.connect()
    for index, source in enumerate(vertex.sources):
        paths = source.paths[0] if len(source.paths) == 1 else list(source.paths)
        views = dict(
            views, **{f"s{index}": ds.dataset(paths).to_table(columns=list(source.columns))}
        )
    for name, table in views.items():
        connection.register(name, table)
    sql = sqlglot.transpile(vertex.operator.sql, read="spark", write="duckdb")[0]
    try:
        return connection.execute(sql).to_arrow_table()
    finally:
        connection.close()


def _unmarked(text: str) -> str:
    return "\n".join(line.split(", join j")[0] for line in text.splitlines()) + "\n"


def test_every_join_decided_at_run_time_can_be_built_on_either_side_in_its_task(tpch):
    """The planner's in-task hint names the side the listing calls smaller; a task told the
    JobManager's decision swaps it for the other side's, in the 22 queries' SQL."""
    swapped = 0
    for number, text in queries().items():
        graph = plan(tpch, text, {}, "RUNTIME_ONLY").graph
        for vertex in graph.vertices:
            for join in getattr(vertex.operator, "joins", ()):
                if join.strategy != "runtime":
                    continue
                assert len(join.hints) == 2, (number, vertex.name, join)
                other = "right" if join.side == "left" else "left"
                built = vertex.operator.built_on({join.join: other})
                assert f"/*+ {join.hints[other == 'right']} */" in built.sql, (number, vertex.name)
                assert vertex.operator.built_on({join.join: join.side}) is vertex.operator
                swapped += 1
    assert swapped > 40


@pytest.mark.parametrize("threshold, into", [(100_000, "scan"), (10_000, "join")])
def test_q18s_few_orders_meet_every_line_where_read_or_in_a_join_the_run_time_may_broadcast(
    tpch, threshold, into
):
    """q18's orders, semi-joined with the lines aggregated by order under a HAVING, are
    guessed a tenth of their rows: under the broadcast threshold (scale 1's defaults / 100)
    they go whole into the scan of every line, so the lines are never hashed for the join;
    over it the join is a stage of its own whose inputs are marked, so the JobManager may
    still send those few orders whole and read the lines in slices, not hash both."""
    config = {
        BROADCAST_THRESHOLD.key: threshold,
        READ_WHOLE_THRESHOLD.key: 10_000,
    }
    planned = plan(tpch, queries()[18], config)
    lines = next(v for v in planned.graph.vertices if v.name == "scan lineitem #2")
    if into == "scan":
        assert [str(e.partitioner) for e in lines.inputs] == ["broadcast"], planned.explain()
        return
    (edge,) = [e for e in planned.graph.edges if e.source is lines]
    assert edge.join is not None and edge.target.name.startswith("join"), planned.explain()
