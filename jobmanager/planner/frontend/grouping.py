"""GROUP BY, aggregates and window functions of one SELECT, bound to column ids.

Spark's rules: once a SELECT aggregates (it has GROUP BY, or an aggregate call anywhere in its
projections, HAVING or ORDER BY), every column it still reads outside an aggregate must be a
grouping expression; a grouping expression is matched by its text (``GROUP BY
substring(c_phone, 1, 2)`` lets the projection say it again). Window functions are computed
after the aggregation and HAVING, grouped by their PARTITION BY, each group one ``Window``
node (the planner places one exchange per partitioning).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from jobmanager.errors import SqlError, UnsupportedSqlError
from jobmanager.planner.expressions import is_aggregate, rewrite_children, type_of
from jobmanager.planner.frontend.scope import position
from jobmanager.planner.logical import (
    Aggregate,
    IdAllocator,
    Node,
    Project,
    Window,
    col,
    references,
)

__all__ = ["aggregate_calls", "aggregated", "with_windows"]

_WRAPPERS = (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)


def aggregate_calls(expressions: Iterable[exp.Expression]) -> list[exp.Expression]:
    """The aggregate calls in ``expressions``, each once (a window function's own call is not
    one; an aggregate inside its arguments is)."""
    found: list[exp.Expression] = []
    for expression in expressions:
        for node in expression.walk():
            if not is_aggregate(node) or isinstance(node.parent, exp.Window):
                continue
            call = node
            while isinstance(call.parent, _WRAPPERS) and call.parent.this is call:
                call = call.parent  # FILTER, IGNORE NULLS: the call's own
            if not any(call == seen for seen in found):
                found.append(call)
    return found


def aggregated(
    node: Node,
    groups: list[exp.Expression],
    expressions: list[exp.Expression],
    ids: IdAllocator,
    origin: str,
) -> tuple[Aggregate, list[exp.Expression]]:
    """The Aggregate of ``node`` by ``groups`` computing every aggregate call of
    ``expressions``, and ``expressions`` rewritten over its output."""
    types = node.typer()
    group_ids = []
    for group in groups:
        if isinstance(group, exp.Column) and group.name not in group_ids:
            group_ids.append(group.name)
        else:
            group_ids.append(ids.new(_readable(group)))
    calls = aggregate_calls(expressions)
    for call in calls:
        if aggregate_calls([_unwrapped(call).this]):
            raise SqlError(
                f"{call.sql(dialect='spark')}: an aggregate inside an aggregate", *position(call)
            )
    call_ids = [ids.new(_readable(call)) for call in calls]
    columns = [(gid, type_of(g, types)) for gid, g in zip(group_ids, groups)]
    columns += [(cid, type_of(c, types)) for cid, c in zip(call_ids, calls)]
    aggregate = Aggregate(
        tuple(columns), origin, node, tuple(zip(group_ids, groups)), tuple(zip(call_ids, calls))
    )
    rewritten = [_over_aggregate(e, groups, group_ids, calls, call_ids) for e in expressions]
    visible = set(group_ids) | set(call_ids)
    for before, after in zip(expressions, rewritten):
        missing = references(after) - visible
        if missing and not _is_placeholder(missing):
            name = min(missing)
            raise SqlError(
                f"column {name!r} in {before.sql(dialect='spark')} is neither grouped "
                "nor inside an aggregate function (add it to GROUP BY, or wrap it in "
                "first() or any_value())",
                *position(before),
            )
    return aggregate, rewritten


def with_windows(
    node: Node, expressions: list[exp.Expression], ids: IdAllocator
) -> tuple[Node, list[exp.Expression]]:
    """``node`` with one Window node per distinct PARTITION BY of the window functions in
    ``expressions`` (partition expressions that are not columns computed first), and
    ``expressions`` reading the functions' columns."""
    windows = [w for e in expressions for w in e.find_all(exp.Window)]
    if not windows:
        return node, expressions
    computed: list[tuple[str, exp.Expression]] = []
    by_partition: dict[tuple[str, ...], list[tuple[str, exp.Expression]]] = {}
    replaced: list[tuple[exp.Expression, str]] = []
    for window in windows:
        if any(window == seen for seen, _ in replaced):
            continue
        if any(w is not window for w in window.find_all(exp.Window)):
            raise UnsupportedSqlError("a window function inside another one", *position(window))
        partition = _partition_ids(window, ids, computed)
        function_id = ids.new(_readable(window.this))
        spec = window.copy()
        spec.set("partition_by", [col(p) for p in partition])
        by_partition.setdefault(tuple(partition), []).append((function_id, spec))
        replaced.append((window, function_id))
    if computed:
        node = _with_computed(node, computed)
    for partition, functions in by_partition.items():
        types = node.typer()
        added = tuple((i, type_of(f, types)) for i, f in functions)
        origin = "OVER (" + (f"PARTITION BY {', '.join(partition)}" if partition else "") + ")"
        node = Window(node.columns + added, origin, node, partition, tuple(functions))
    rewritten = [_replace_equal(e, replaced) for e in expressions]
    return node, rewritten


def _partition_ids(
    window: exp.Window, ids: IdAllocator, computed: list[tuple[str, exp.Expression]]
) -> list[str]:
    """The ids of ``window``'s PARTITION BY keys; a key that is not a column gets a new id,
    and is added to ``computed`` to be projected before the window."""
    partition = []
    for key in window.args.get("partition_by") or []:
        if isinstance(key, exp.Column):
            partition.append(key.name)
        else:
            key_id = ids.new("_w")
            computed.append((key_id, key))
            partition.append(key_id)
    return partition


def _with_computed(node: Node, computed: list[tuple[str, exp.Expression]]) -> Node:
    """``node``'s columns and the ``computed`` ones, projected."""
    types = node.typer()
    exprs = tuple((c, col(c)) for c in node.ids) + tuple(computed)
    return Project(
        node.columns + tuple((i, type_of(e, types)) for i, e in computed), node.origin, node, exprs
    )


def _over_aggregate(expression, groups, group_ids, calls, call_ids) -> exp.Expression:
    replacements = list(zip(calls, call_ids)) + [
        (g, gid) for g, gid in zip(groups, group_ids) if not isinstance(g, exp.Column)
    ]
    rewritten = _replace_equal(expression, replacements)
    column_groups = [(g, gid) for g, gid in zip(groups, group_ids) if isinstance(g, exp.Column)]
    return _replace_equal(rewritten, column_groups)


def _replace_equal(
    expression: exp.Expression, pairs: list[tuple[exp.Expression, str]]
) -> exp.Expression:
    """``expression`` with each subexpression equal to one of ``pairs`` replaced by its
    column; the outermost match wins and is not entered."""
    for target, column_id in pairs:
        if expression == target:
            return col(column_id)
    return rewrite_children(expression.copy(), lambda child: _replace_equal(child, pairs))


def _unwrapped(call: exp.Expression) -> exp.Expression:
    while isinstance(call, _WRAPPERS):
        call = call.this
    return call


def _is_placeholder(missing: set[str]) -> bool:
    return all(name.startswith("_sq") for name in missing)


def _readable(expression: exp.Expression) -> str:
    if isinstance(expression, exp.Column):
        return expression.name
    name = type(expression).__name__.lower()
    return {"filter": "agg", "anonymous": expression.name.lower()}.get(name, name)
