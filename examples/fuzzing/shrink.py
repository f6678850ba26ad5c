"""Shrinking a query that differs or is refused to the smallest one that still does.

Greedy, on the sqlglot tree: each round tries the candidates of the current query, biggest cut
first, and keeps the first one that still fails the same way (``fails``, a predicate the
caller gives: it runs the candidate on both engines); it stops when no candidate fails, or
after ``max_checks`` checks, since each check may run a job. The candidates:

- a clause dropped: WHERE, HAVING, ORDER BY, LIMIT, OFFSET, DISTINCT, a join, a select item
  (with the ORDER BY key that names it);
- a condition cut: an AND or OR replaced by either side, a NOT by what it negates, a CASE by
  one of its values, a set operation by one of its branches;
- an element of a list dropped: a GROUP BY key, a grouping set, an ORDER BY key, a column of a
  tuple.

A candidate must stay determined, or shrinking would find differences of its own making:
nothing inside a window's specification is cut (its ``id`` ties must stay), and a query whose
ORDER BY no longer names every output column is compared as a multiset, and is no candidate at
all if it keeps a LIMIT or OFFSET (``total_order``). A candidate Spark rejects does not fail
the same way (the predicate's business), so invalid cuts are simply passed over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import sqlglot
from sqlglot import exp

__all__ = ["candidates", "shrink", "total_order"]

_CLAUSES = ("where", "having", "order", "limit", "offset", "distinct")


def shrink(sql: str, fails: Callable[[str, bool], bool], max_checks: int = 80) -> str:
    """The smallest query found from ``sql`` for which ``fails(query, ordered)`` holds (``sql``
    itself if none); ``ordered``: compare in order (``total_order``)."""
    best, checks, tried = sql, 0, {sql}
    improved = True
    while improved and checks < max_checks:
        improved = False
        for candidate in sorted(candidates(best), key=len):
            if candidate in tried or len(candidate) >= len(best):
                continue
            tried.add(candidate)
            ordered = total_order(candidate)
            if ordered is None:
                continue
            checks += 1
            if fails(candidate, ordered):
                best, improved = candidate, True
                break
            if checks >= max_checks:
                break
    return best


def total_order(sql: str) -> bool | None:
    """True if the query's top ORDER BY names every output column (its rows are then totally
    ordered); False if it has none, or a partial one without LIMIT or OFFSET (compared as a
    multiset); None if a partial order decides which rows a LIMIT or OFFSET keeps."""
    tree = sqlglot.parse_one(sql, read="spark")
    order = tree.args.get("order")
    limited = tree.args.get("limit") is not None or tree.args.get("offset") is not None
    if order is None:
        return None if limited else False
    keys = {o.this.name for o in order.expressions if isinstance(o.this, exp.Column)}
    if set(tree.named_selects) <= keys:
        return True
    return None if limited else False


def candidates(sql: str) -> Iterator[str]:
    """Every query one cut smaller than ``sql`` (the module docstring), as Spark SQL text."""
    tree = sqlglot.parse_one(sql, read="spark")
    for node in list(tree.walk()):
        if _in_window(node):
            continue
        for cut in _CUTS:
            for result in cut(tree, node):
                try:
                    yield result.sql(dialect="spark")
                except Exception:  # noqa: BLE001 - a cut sqlglot cannot render is no candidate
                    continue


def _in_window(node: exp.Expression) -> bool:
    return node.find_ancestor(exp.Window) is not None and not isinstance(node, exp.Window)


def _drop_clauses(tree, node) -> Iterator[exp.Expression]:
    if not isinstance(node, exp.Query):
        return
    for name in _CLAUSES:
        if node.args.get(name) is not None:
            copy = tree.copy()
            target = _same(copy, tree, node)
            target.set(name, None)
            yield copy


def _drop_joins(tree, node) -> Iterator[exp.Expression]:
    if not isinstance(node, exp.Select):
        return
    for index in range(len(node.args.get("joins") or [])):
        copy = tree.copy()
        target = _same(copy, tree, node)
        joins = list(target.args["joins"])
        del joins[index]
        target.set("joins", joins or None)
        yield copy


def _drop_items(tree, node) -> Iterator[exp.Expression]:
    """A select item dropped, with the top ORDER BY key naming it."""
    if not isinstance(node, exp.Select) or len(node.expressions) < 2:
        return
    for index in range(len(node.expressions)):
        copy = tree.copy()
        target = _same(copy, tree, node)
        name = target.expressions[index].alias_or_name
        target.set("expressions", [e for i, e in enumerate(target.expressions) if i != index])
        order = copy.args.get("order") if target is copy else None
        if order is not None:
            keys = [
                o
                for o in order.expressions
                if not (isinstance(o.this, exp.Column) and o.this.name == name)
            ]
            order.set("expressions", keys)
            if not keys:
                copy.set("order", None)
        yield copy


def _drop_elements(tree, node) -> Iterator[exp.Expression]:
    """An element of a GROUP BY, a grouping set list, a ROLLUP or CUBE, an ORDER BY or a
    tuple dropped."""
    if (
        not isinstance(
            node, (exp.Group, exp.GroupingSets, exp.Rollup, exp.Cube, exp.Tuple, exp.Order)
        )
        or len(node.expressions) < 2
    ):
        return
    for index in range(len(node.expressions)):
        copy = tree.copy()
        target = _same(copy, tree, node)
        target.set("expressions", [e for i, e in enumerate(target.expressions) if i != index])
        yield copy


def _replace_by_part(tree, node) -> Iterator[exp.Expression]:
    """An AND or OR by either side, a NOT or a parenthesis by its inside, a CASE by a value,
    a set operation by a branch."""
    if isinstance(node, (exp.And, exp.Or, exp.SetOperation)):
        parts = [node.this, node.expression]
    elif isinstance(node, (exp.Not, exp.Paren)):
        parts = [node.this]
    elif isinstance(node, exp.Case):
        parts = [w.args.get("true") for w in node.args.get("ifs") or []] + [
            node.args.get("default")
        ]
    else:
        return
    for part in parts:
        if part is None:
            continue
        copy = tree.copy()
        target = _same(copy, tree, node)
        replacement = _same(copy, tree, part).copy()
        if target is copy:
            yield replacement
        else:
            target.replace(replacement)
            yield copy


def _same(copy: exp.Expression, tree: exp.Expression, node: exp.Expression) -> exp.Expression:
    """The node of ``copy`` at ``node``'s place in ``tree``."""
    for original, twin in zip(tree.walk(), copy.walk()):
        if original is node:
            return twin
    raise ValueError("node not in tree")


_CUTS = (_drop_clauses, _drop_joins, _drop_items, _drop_elements, _replace_by_part)
