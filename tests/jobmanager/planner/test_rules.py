"""The planner's logical rules: run in order by ``optimize``, stopped after one, left out by
name through ``table.optimizer.rules.disabled``, a name no rule has refused. Planning only."""

from __future__ import annotations

import pytest

from jobmanager.errors import ConfigurationError
from jobmanager.model.config import RULES_DISABLED, Configuration
from jobmanager.model.operators import SqlOperator
from jobmanager.planner.frontend.parse import parse, qualified
from jobmanager.planner.frontend.translate import Translator
from jobmanager.planner.logical import Filter, IdAllocator, Join, Scan, nodes_of
from jobmanager.planner.rules import RULES, RuleContext, optimize, plan_text
from tests.jobmanager.planner.test_plans import OWN_VERTICES, plan

NAMES = [
    "push-filters",
    "prune-columns",
    "reorder-joins",
    "aggregate-before-joins",
    "trim-columns",
    "filter-by-join-keys",
]
FILTERED_JOIN = (
    "SELECT d.name, SUM(f.v) AS total FROM facts f JOIN dims d ON f.k = d.k "
    "WHERE d.name = 'n1' GROUP BY d.name"
)


def logical(catalog, query: str):
    ids = IdAllocator()
    node = Translator(catalog, ids, query).query(qualified(parse(query), catalog)).node
    return node, RuleContext.from_config(Configuration(), ids)


def vertex_sql(planned, prefix: str) -> str:
    """The SQL of the one vertex named ``prefix...``, or ("join") the one that joins."""
    (sql,) = [
        v.operator.sql
        for v in planned.graph.vertices
        if isinstance(v.operator, SqlOperator)
        and (v.name.startswith(prefix) if prefix != "join" else " JOIN " in v.operator.sql)
    ]
    return sql


def test_the_rules_run_in_their_order_each_named_and_saying_what_it_matches():
    assert [rule.name for rule in RULES] == NAMES
    assert str(list(RULES)) == "[" + ", ".join(NAMES) + "]"  # printable
    assert all("returns" in (type(rule).__doc__ or "") for rule in RULES)


def test_optimize_stops_after_the_rule_upto_names(catalog):
    tree, context = logical(catalog, FILTERED_JOIN)
    trace: list = []
    pushed = optimize(tree, context, upto="push-filters", trace=trace)
    assert [step.rule for step in trace] == ["push-filters"] and trace[0].changed
    (dims,) = [n for n in nodes_of(pushed) if isinstance(n, Scan) and n.table.name == "dims"]
    assert dims.filters and "name" in dims.ids and len(dims.ids) == 2  # filtered, not pruned
    pruned = optimize(tree, context, upto="prune-columns")
    assert "Scan dims [k_2, name] where" in plan_text(pruned)
    assert "Scan facts [k, v]" in plan_text(pruned)  # f.g, f.s, f.d pruned


def test_the_trace_records_each_rule_and_what_it_changed(catalog):
    tree, context = logical(catalog, FILTERED_JOIN)
    trace: list = []
    optimize(tree, context, trace=trace)
    assert [step.rule for step in trace] == NAMES
    first = trace[0]
    assert any(line.startswith("+") and "where" in line for line in first.diff())
    assert not any(step.diff() for step in trace if not step.changed)


def test_disabling_push_filters_by_the_option_leaves_the_filter_above_the_join(catalog):
    pushed = plan(catalog, FILTERED_JOIN, OWN_VERTICES)
    assert "WHERE" in vertex_sql(pushed, "scan dims")
    assert "WHERE" not in vertex_sql(pushed, "join")
    kept = plan(catalog, FILTERED_JOIN, {**OWN_VERTICES, RULES_DISABLED.key: "push-filters"})
    assert "WHERE" not in vertex_sql(kept, "scan dims")
    assert "WHERE" in vertex_sql(kept, "join")  # the join's rows, filtered after it


def test_a_disabled_rule_is_left_out_of_optimize(catalog):
    tree, context = logical(catalog, FILTERED_JOIN)
    trace: list = []
    kept = optimize(tree, context, upto="push-filters", disabled=["push-filters"], trace=trace)
    assert trace[0].disabled and not trace[0].changed
    assert any(isinstance(n, Filter) and isinstance(n.child, Join) for n in nodes_of(kept))


def test_an_unknown_rule_name_is_refused_naming_it_and_the_rules_there_are(catalog):
    config = {RULES_DISABLED.key: "push-filters, no-such-rule"}
    with pytest.raises(ConfigurationError) as caught:
        plan(catalog, FILTERED_JOIN, config)
    message = str(caught.value)
    assert RULES_DISABLED.key in message and "'no-such-rule'" in message
    assert all(name in message for name in NAMES)
    tree, context = logical(catalog, FILTERED_JOIN)
    with pytest.raises(ValueError, match="unknown rule 'push-filter'; the rules are push-filters"):
        optimize(tree, context, upto="push-filter")


def test_the_option_reads_names_separated_by_commas():
    assert Configuration()[RULES_DISABLED.key] == ()
    config = Configuration({RULES_DISABLED.key: " Push-Filters,, trim-columns "})
    assert config[RULES_DISABLED.key] == ("push-filters", "trim-columns")
    assert (
        Configuration.from_bytes(config.to_bytes())[RULES_DISABLED.key]
        == config[RULES_DISABLED.key]
    )
