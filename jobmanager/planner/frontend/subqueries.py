"""Subqueries become joins, keeping the kind of join they mean.

- ``EXISTS (q)`` and ``x IN (q)`` in a WHERE conjunct: a left semi join with ``q``, on the
  conjuncts of ``q``'s WHERE that read the outer query (equalities and any residual condition,
  such as TPC-H Q21's ``l2.l_suppkey <> l1.l_suppkey``) and, for IN, ``x = q's column``;
  ``NOT EXISTS`` and ``NOT IN``: a left anti join. ``NOT IN`` is null-aware, as Spark plans it:
  the condition is ``x = y OR (x = y) IS NULL``, so a NULL on either side keeps the row out.
- An uncorrelated scalar subquery: a ``single`` join, its one row appended to every row (NULL
  when it has none; Spark raises if it has more). Its result reaches the vertex that needs it
  whole, as a one-row broadcast input.
- A correlated scalar subquery that aggregates: grouped by the inner side of its correlation
  equalities and left-joined on them (TPC-H Q2, Q17, Q20); an aggregate that is not NULL over
  no rows (COUNT) gives its empty value where no group matched, not NULL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from jobmanager.errors import SqlError, UnsupportedSqlError
from jobmanager.planner.frontend.in_task import in_task
from jobmanager.planner.frontend.scope import Scope, position
from jobmanager.planner.logical import Join, Node, Project, col, conjoin, paren, references
from jobmanager.planner.types import BOOLEAN

if TYPE_CHECKING:
    from jobmanager.planner.frontend.translate import Translator

__all__ = ["Correlation", "Pending", "attach", "semi_or_anti"]


@dataclass
class Correlation:
    """Collects the WHERE conjuncts of a subquery that read its enclosing query, instead of
    filtering with them; ``group_keys``: a scalar subquery, grouped by its correlation keys."""

    conjuncts: list[exp.Expression] = field(default_factory=list)
    group_keys: bool = False
    keys: list[tuple[str, exp.Expression]] = field(default_factory=list)  # (inner id, outer)


@dataclass
class Pending:
    """A subquery met while binding an expression: its placeholder column and its query (a
    scalar subquery, or an EXISTS or IN over a query: a ``predicate``)."""

    column_id: str
    query: exp.Expression
    predicate: bool = False


def semi_or_anti(
    translator: Translator, node: Node, conjunct: exp.Expression, scope: Scope
) -> Node | None:
    """``node`` semi- or anti-joined with the subquery of ``conjunct`` when it is one of
    EXISTS, NOT EXISTS, IN (query), NOT IN (query); else None."""
    negated = isinstance(conjunct, exp.Not)
    inner = conjunct.this if negated else conjunct
    inner = inner.this if isinstance(inner, exp.Paren) else inner
    if isinstance(inner, exp.Exists):
        correlation = Correlation()
        relation = translator.query(_unwrap(inner.this), scope, correlation)
        condition = conjoin(correlation.conjuncts) or exp.true()
        return _kept_or_dropped_by(node, relation.node, negated, condition, conjunct)
    if isinstance(inner, exp.In) and inner.args.get("query") is not None:
        correlation = Correlation()
        relation = translator.query(_unwrap(inner.args["query"]), scope, correlation)
        left = inner.this.expressions if isinstance(inner.this, exp.Tuple) else [inner.this]
        if len(left) != len(relation.names):
            raise SqlError(
                f"{_origin(conjunct)}: IN compares {len(left)} values with a "
                f"subquery of {len(relation.names)} columns",
                *position(conjunct),
            )
        pairs = []
        for value, column_id in zip(left, relation.node.ids):
            bound = scope.bind(value).expression
            equal = exp.EQ(this=paren(bound), expression=col(column_id))
            is_null = exp.Is(this=exp.Paren(this=equal.copy()), expression=exp.Null())
            pairs.append(exp.Paren(this=exp.or_(equal, is_null)) if negated else equal)
        condition = conjoin(pairs + correlation.conjuncts)
        return _kept_or_dropped_by(node, relation.node, negated, condition, conjunct)
    return None


def _kept_or_dropped_by(
    node: Node, subquery: Node, negated: bool, condition: exp.Expression, conjunct: exp.Expression
) -> Join:
    """``node``'s rows kept where ``subquery`` has a row meeting ``condition`` (a semi join),
    or, ``negated``, where it has none (an anti join)."""
    kind = "anti" if negated else "semi"
    return Join(node.columns, _origin(conjunct), node, subquery, kind, condition)


def attach(
    translator: Translator,
    node: Node,
    pending: list[Pending],
    scope: Scope,
    read_as: dict[str, str] | None = None,
) -> Node:
    """``node`` with each pending subquery's value under its placeholder: a scalar subquery
    joined on where its correlation allows; else, and for EXISTS and IN inside an expression,
    evaluated per row in the task (``in_task``). ``read_as``: a column of ``scope`` that
    ``node`` holds under another id (a grouping set's key, NULL in the sets that lack it),
    which the correlation reads instead."""
    read_as = read_as or {}
    for item in pending:
        if item.predicate:
            node = in_task(node, item.column_id, item.query, scope, translator.relations, read_as)
            continue
        correlation = Correlation(group_keys=True)
        try:
            relation = translator.query(_unwrap(item.query), scope, correlation)
        except UnsupportedSqlError:
            node = in_task(node, item.column_id, item.query, scope, translator.relations, read_as)
            continue
        if len(relation.names) != 1:
            raise SqlError(
                f"a scalar subquery must give one column, this one gives "
                f"{len(relation.names)}: {_origin(item.query)}",
                *position(item.query),
            )
        value_id = relation.node.ids[0]
        value_type = relation.node.columns[0][1]
        if not correlation.conjuncts:
            renamed = Project(
                ((item.column_id, value_type),),
                _origin(item.query),
                relation.node,
                ((item.column_id, col(value_id)),),
            )
            node = Join(
                node.columns + renamed.columns, _origin(item.query), node, renamed, "single"
            )
            continue
        correlation.keys = [
            (inner_id, _read_as(outer, read_as)) for inner_id, outer in correlation.keys
        ]
        node = _correlated(node, relation.node, value_id, value_type, item, correlation)
    return node


def _read_as(expression: exp.Expression, read_as: dict[str, str]) -> exp.Expression:
    if not read_as:
        return expression
    return expression.transform(
        lambda e: (
            col(read_as[e.name])
            if isinstance(e, exp.Column) and not e.table and e.name in read_as
            else e
        )
    )


def _correlated(
    node: Node, inner: Node, value_id: str, value_type, item: Pending, correlation: Correlation
) -> Node:
    """Left join with the subquery grouped by its correlation keys; COUNT's empty value (0)
    where no group matched, told apart from a NULL aggregate by a matched flag."""
    condition = conjoin(
        exp.EQ(this=paren(outer.copy()), expression=col(inner_id))
        for inner_id, outer in correlation.keys
    )
    empty = _empty_value(item.query)
    if empty is None:
        joined = Join(
            node.columns + inner.columns, _origin(item.query), node, inner, "left", condition
        )
        value = col(value_id)
    else:
        flag = value_id + "_matched"
        exprs = tuple((c, col(c)) for c in inner.ids) + ((flag, exp.true()),)
        flagged = Project(inner.columns + ((flag, BOOLEAN),), inner.origin, inner, exprs)
        joined = Join(
            node.columns + flagged.columns, _origin(item.query), node, flagged, "left", condition
        )
        value = exp.Case(
            ifs=[exp.If(this=exp.Is(this=col(flag), expression=exp.Null()), true=empty)],
            default=col(value_id),
        )
    exprs = tuple((c, col(c)) for c in node.ids) + ((item.column_id, value),)
    return Project(node.columns + ((item.column_id, value_type),), joined.origin, joined, exprs)


def correlation_key(
    conjunct: exp.Expression, outer_ids: set[str]
) -> tuple[exp.Expression, exp.Expression] | None:
    """(inner side, outer side) of an equality between an expression of the subquery's own
    columns and one of the enclosing query's; None for any other conjunct."""
    if not isinstance(conjunct, exp.EQ):
        return None
    left, right = conjunct.this, conjunct.expression
    for inner, outer in ((left, right), (right, left)):
        inner_refs, outer_refs = references(inner), references(outer)
        if inner_refs and outer_refs and not inner_refs & outer_ids and outer_refs <= outer_ids:
            return inner, outer
    return None


def require_equalities(
    correlation: Correlation, outer_ids: set[str], where: exp.Expression
) -> list[tuple[exp.Expression, exp.Expression]]:
    keys = []
    for conjunct in correlation.conjuncts:
        key = correlation_key(conjunct, outer_ids)
        if key is None:
            raise UnsupportedSqlError(
                f"a correlated scalar subquery may only compare its own "
                f"columns for equality with the outer query's; "
                f"{conjunct.sql(dialect='spark')} does something else",
                *position(where),
            )
        keys.append(key)
    return keys


def _empty_value(query: exp.Expression) -> exp.Expression | None:
    """What the subquery's one projection gives over no rows, when that is not NULL: its
    aggregates' empty values put in (COUNT: 0) and the result folded, if it has a COUNT."""
    select = _unwrap(query)
    projection = select.expressions[0] if isinstance(select, exp.Select) else None
    if projection is None or not any(isinstance(n, exp.Count) for n in projection.walk()):
        return None
    value = projection.this if isinstance(projection, exp.Alias) else projection
    replaced = value.copy().transform(
        lambda n: (
            exp.Literal.number(0)
            if isinstance(n, exp.Count)
            else exp.Null()
            if isinstance(n, exp.AggFunc)
            else n
        )
    )
    if any(isinstance(n, exp.Column) for n in replaced.walk()):
        raise UnsupportedSqlError(
            f"a correlated scalar subquery counting with columns outside "
            f"its aggregates: {_origin(query)}",
            *position(query),
        )
    return replaced


def _unwrap(query: exp.Expression) -> exp.Expression:
    while isinstance(query, exp.Subquery) and not query.args.get("alias"):
        query = query.this
    return query


def _origin(node: exp.Expression) -> str:
    text = node.sql(dialect="spark")
    return text if len(text) <= 200 else text[:197] + "..."
