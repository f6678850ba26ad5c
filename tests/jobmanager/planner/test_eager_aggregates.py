"""A join's looked-up side counted by its key before the join (``eager_aggregates``): where it
applies, where it does not, and DuckDB's answers from the plans it gives, each vertex run as
two subtasks in one Spark session (as ``test_answers``)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jobmanager.model.config import BROADCAST_THRESHOLD, READ_WHOLE_THRESHOLD, Configuration
from jobmanager.model.operators import ParquetSink
from jobmanager.planner import Catalog, plan_sql
from tests.jobmanager.planner.test_answers import (  # noqa: F401 (duck: a fixture)
    _duckdb_answer,
    _write,
    duck,
)

_CUSTOMERS = pa.schema([("k", pa.int32()), ("region", pa.string())])
_ORDERS = pa.schema(
    [("ck", pa.int32()), ("id", pa.int64()), ("note", pa.string()), ("day", pa.int32())]
)
# keys repeated (20 orders per key), NULL keys and NULL ids among them; customers with a
# duplicate key, a NULL key and keys no order has
_CUSTOMER_ROWS = [(k, f"r{k % 3}") for k in range(12)] + [(3, "r9"), (None, "r1")]
_ORDER_ROWS = [
    (i % 8 if i % 11 else None, i if i % 7 else None, "special" if i % 5 == 0 else "x", i % 30)
    for i in range(160)
]

# TPC-H q13 but its final ORDER BY: the one-session runner does not cut by key ranges
Q13 = (
    "SELECT n, COUNT(*) AS customers FROM (SELECT c.k, COUNT(o.id) AS n FROM customers c "
    "LEFT JOIN orders o ON c.k = o.ck AND o.note NOT LIKE '%special%' GROUP BY c.k) t "
    "GROUP BY n"
)


@pytest.fixture
def tables(tmp_path) -> dict[str, str]:
    return {
        "customers": _write(tmp_path / "customers", _CUSTOMER_ROWS, _CUSTOMERS),
        "orders": _write(tmp_path / "orders", _ORDER_ROWS, _ORDERS),
    }


def planned(tables, query: str, broadcast_threshold: int | None = None):
    config = {READ_WHOLE_THRESHOLD.key: -1}
    if broadcast_threshold is not None:
        config[BROADCAST_THRESHOLD.key] = broadcast_threshold
    return plan_sql(
        query,
        Catalog.from_tables(tables),
        ParquetSink("/tmp/tidal-eager-out"),
        Configuration(config),
    )


def counted_first(tables, query: str) -> bool:
    """Whether the logical plan, after the rule, joins an aggregate of ``orders``."""
    from jobmanager.planner.frontend.parse import parse, qualified
    from jobmanager.planner.frontend.translate import Translator
    from jobmanager.planner.logical import Aggregate, IdAllocator, Join, Scan, nodes_of
    from jobmanager.planner.rules import RuleContext, optimize

    catalog, ids = Catalog.from_tables(tables), IdAllocator()
    node = Translator(catalog, ids).query(qualified(parse(query), catalog)).node
    context = RuleContext.from_config(Configuration(), ids)
    node = optimize(node, context, upto="aggregate-before-joins")
    return any(
        isinstance(n, Join)
        and isinstance(side, Aggregate)
        and isinstance(side.child, Scan)
        and side.child.table.name == "orders"
        for n in nodes_of(node)
        for side in n.children
    )


@pytest.mark.parametrize(
    "query",
    [
        Q13,
        "SELECT c.region, COUNT(o.id), MIN(o.note), MAX(o.day) FROM customers c JOIN orders o "
        "ON o.ck = c.k GROUP BY c.region",
    ],
    ids=["q13 left join", "inner join extremes"],
)
def test_a_count_of_the_side_whose_key_repeats_is_taken_before_the_join(tables, query):
    assert counted_first(tables, query), planned(tables, query).explain()


@pytest.mark.parametrize(
    "query",
    [
        "SELECT c.k, COUNT(*) FROM customers c LEFT JOIN orders o ON c.k = o.ck GROUP BY c.k",
        "SELECT c.k, SUM(o.id) FROM customers c LEFT JOIN orders o ON c.k = o.ck GROUP BY c.k",
        "SELECT c.k, COUNT(DISTINCT o.id) FROM customers c JOIN orders o ON c.k = o.ck GROUP BY c.k",
        "SELECT c.k, COUNT(o.id) FROM customers c JOIN orders o ON c.k = o.ck AND o.day > c.k "
        "GROUP BY c.k",
        "SELECT o.day, COUNT(o.id) FROM customers c JOIN orders o ON c.k = o.ck GROUP BY o.day",
        "SELECT o.ck, COUNT(c.region) FROM orders o LEFT JOIN customers c ON c.k = o.ck "
        "GROUP BY o.ck",
    ],
    ids=[
        "count star",
        "sum",
        "distinct",
        "residual condition",
        "grouped by the counted side",
        "unique key looked up",
    ],
)
def test_a_count_the_rule_cannot_split_or_that_would_not_pay_stays_after_the_join(tables, query):
    assert not counted_first(tables, query), planned(tables, query).explain()


@pytest.mark.spark
@pytest.mark.parametrize(
    "query",
    [
        Q13,
        "SELECT c.region, COUNT(o.id) AS n, MIN(o.note) AS lo, MAX(o.day) AS hi FROM customers c "
        "LEFT JOIN orders o ON o.ck = c.k GROUP BY c.region",
        "SELECT COUNT(o.id) AS n, MAX(o.day) AS hi FROM customers c JOIN orders o ON c.k = o.ck "
        "WHERE c.region <> 'r2'",
        # an outer join's rows hashed by the looked-up side's key, then grouped by that key: the
        # unmatched customers' NULL keys are one group
        "SELECT g.ck, COUNT(*) AS n FROM customers c LEFT JOIN (SELECT ck, MAX(day) AS d "
        "FROM orders GROUP BY ck) g ON c.k = g.ck GROUP BY g.ck",
    ],
    ids=["q13", "left join by region", "no groups", "grouped by the looked-up key"],
)
@pytest.mark.parametrize("broadcast_threshold", [None, -1], ids=["broadcast", "hashed"])
def test_counted_before_the_join_the_answer_is_duckdbs(
    tables, query, broadcast_threshold, spark_session, duck
):
    from examples.compare import query_is_ordered, sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    plan = planned(tables, query, broadcast_threshold)
    got = run_in_one_session(plan.graph, spark_session, subtask_counts(plan.graph))
    difference = sql_difference(got, _duckdb_answer(duck, tables, query), query_is_ordered(query))
    assert difference is None, f"{difference}\n{plan.explain()}"
