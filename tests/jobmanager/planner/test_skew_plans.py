"""``execution.batch.adaptive.skewed-join-optimization.strategy`` in the planner (FLIP-475).

A shuffled join's inputs are splittable as its kind allows; where an operator placed in the
join's own stage relies on the join's hashing (an aggregate or window on its keys, a further
join on them), ``auto`` (the default) and ``none`` leave it there and the inputs unsplittable,
and ``forced`` ends the join's stage at the join and hashes the rows again for that operator,
so the join's skew may still be cut. Planning only."""

from __future__ import annotations

import pytest

from jobmanager.model.config import BROADCAST_THRESHOLD, SKEWED_JOIN_STRATEGY, Configuration
from jobmanager.model.operators import ParquetSink
from jobmanager.planner import plan_sql

HASH_EVERYTHING = {BROADCAST_THRESHOLD.key: -1}
SINK = ParquetSink("/tmp/tidal-planner-tests-out", overwrite=True)
JOIN = "FROM facts f {} dims d ON f.k = d.k"
AGGREGATE = "SELECT f.k, SUM(f.v) AS t " + JOIN.format("JOIN") + " GROUP BY f.k"
WINDOW = "SELECT f.k, ROW_NUMBER() OVER (PARTITION BY f.k ORDER BY f.v) AS n " + JOIN.format("JOIN")
JOIN_AGAIN = "SELECT f.s " + JOIN.format("JOIN") + " JOIN others o ON o.k = f.k"


def plan(catalog, query: str, strategy: str | None = None, key: str = SKEWED_JOIN_STRATEGY.key):
    values = {**HASH_EVERYTHING, **({key: strategy} if strategy else {})}
    return plan_sql(query, catalog, SINK, Configuration(values))


def joins(planned) -> list:
    return [v for v in planned.graph.vertices if v.name.startswith("join")]


def inputs(vertex) -> dict[str, tuple[str, bool]]:
    return {e.source.name: (str(e.partitioner), e.splittable) for e in vertex.inputs}


@pytest.mark.parametrize("strategy", [None, "auto", "none"])
def test_auto_and_none_aggregate_in_the_joins_stage_whose_inputs_are_not_splittable(
    catalog, strategy
):
    planned = plan(catalog, AGGREGATE, strategy)
    (join,) = joins(planned)
    assert "GROUP BY" in join.operator.sql, planned.explain()
    assert inputs(join) == {"scan facts f": ("hash(k)", False), "scan dims d": ("hash(k_2)", False)}
    assert [e.target.name for e in join.outputs] == ["result"]


def test_forced_aggregates_behind_a_hash_exchange_and_the_join_is_splittable(catalog):
    planned = plan(catalog, AGGREGATE, "forced")
    (join,) = joins(planned)
    assert "GROUP BY" not in join.operator.sql, planned.explain()
    assert inputs(join) == {"scan facts f": ("hash(k)", True), "scan dims d": ("hash(k_2)", True)}
    (partial,) = [e.target for e in join.outputs]
    assert partial.name == "partial aggregate" and inputs(partial) == {"join k": ("forward", False)}
    (final,) = [e.target for e in partial.outputs]
    assert inputs(final) == {"partial aggregate": ("hash(k)", False)}


def test_forced_cuts_only_the_sides_the_join_kind_allows(catalog):
    query = "SELECT f.k, COUNT(*) AS n " + JOIN.format("LEFT JOIN") + " GROUP BY f.k"
    (auto,) = joins(plan(catalog, query))
    assert not any(split for _, split in inputs(auto).values())
    (forced,) = joins(plan(catalog, query, "forced"))
    assert inputs(forced) == {
        "scan facts f": ("hash(k)", True),
        "scan dims d": ("hash(k_2)", False),
    }


def test_forced_puts_a_window_on_the_join_key_behind_a_hash_exchange(catalog):
    (auto,) = joins(plan(catalog, WINDOW))
    assert "ROW_NUMBER" in auto.operator.sql
    planned = plan(catalog, WINDOW, "forced")
    (join,) = joins(planned)
    assert "ROW_NUMBER" not in join.operator.sql, planned.explain()
    assert all(split for _, split in inputs(join).values())
    (window,) = [e.target for e in join.outputs]
    assert window.name.startswith("window") and inputs(window) == {"join k": ("hash(k)", False)}


def test_forced_hashes_a_further_join_on_the_same_key_into_a_stage_of_its_own(catalog):
    (auto,) = joins(plan(catalog, JOIN_AGAIN))
    assert len(auto.inputs) == 3 and not any(e.splittable for e in auto.inputs)
    planned = plan(catalog, JOIN_AGAIN, "forced")
    first, second = joins(planned)
    assert inputs(first) == {"scan facts f": ("hash(k)", True), "scan dims d": ("hash(k_2)", True)}
    assert inputs(second) == {"join k": ("hash(k)", True), "scan others o": ("hash(k_3)", True)}


def test_forced_changes_nothing_where_nothing_relies_on_the_joins_hashing(catalog):
    for query in (
        "SELECT f.s, d.name " + JOIN.format("JOIN"),
        "SELECT f.k, COUNT(*) AS n " + JOIN.format("FULL JOIN") + " GROUP BY f.k",
    ):
        assert plan(catalog, query, "forced").explain() == plan(catalog, query).explain()


def test_flinks_table_optimizer_key_is_taken_too(catalog):
    flink = plan(catalog, AGGREGATE, "FORCED", "table.optimizer.skewed-join-optimization.strategy")
    assert flink.explain() == plan(catalog, AGGREGATE, "forced").explain()
