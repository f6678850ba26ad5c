"""A subquery the planner does not turn into a join of its own is evaluated by Spark, per row,
in the task of the query around it.

EXISTS, NOT EXISTS, IN and NOT IN inside an expression (under OR, NOT or CASE, in the SELECT
list, in HAVING), and a scalar subquery whose correlation is not a set of equalities, keep
their text: Spark plans each as it would in a query of its own (an existence join that marks
each row, a decorrelation over the correlated values), with SQL's NULL semantics. The query
around it is still planned and cut as usual; the subquery's tables (and CTEs from outside it)
reach each of its tasks whole, as a broadcast join's small side does, so any correlation,
equality or not, holds within the task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from jobmanager.errors import UnsupportedSqlError
from jobmanager.planner.frontend.scope import Scope, position
from jobmanager.planner.frontend.whole_query import output_types, own_aliases, tables_as_inputs
from jobmanager.planner.logical import OUTER, Node, SubqueryColumn
from jobmanager.planner.types import BOOLEAN

if TYPE_CHECKING:
    from jobmanager.planner.frontend.relations import Relations

__all__ = ["in_task"]


def in_task(
    node: Node,
    column_id: str,
    expression: exp.Expression,
    scope: Scope,
    relations: Relations,
    read_as: dict[str, str] | None = None,
) -> SubqueryColumn:
    """``node`` with ``expression`` (an EXISTS, an IN over a query, or a scalar subquery,
    qualified, as the query wrote it) evaluated per row as ``column_id``; ``read_as``: see
    ``subqueries.attach``."""
    read_as = read_as or {}
    tree = expression.copy()
    inner = (
        tree.this
        if isinstance(tree, exp.Exists)
        else tree.args.get("query")
        if isinstance(tree, exp.In)
        else tree
    )
    _read_outer(inner, scope, set(node.ids), read_as)
    if isinstance(tree, exp.In):
        tree.set("this", _outer_columns(scope.bind(tree.this).expression, read_as))
    inputs, placeholders, names = tables_as_inputs(inner, relations)
    if isinstance(tree, exp.Subquery):
        (kind,) = output_types(expression.this, relations, 1)
    else:
        kind = BOOLEAN
    text = expression.sql(dialect="spark")
    origin = text if len(text) <= 160 else text[:157] + "..."
    return SubqueryColumn(
        node.columns + ((column_id, kind),),
        f"{origin} (per row, by Spark)",
        node,
        column_id,
        tree,
        inputs,
        placeholders,
        names,
    )


def _read_outer(
    query: exp.Expression, scope: Scope, available: set[str], read_as: dict[str, str]
) -> None:
    """Each column of ``query`` that names a relation around it replaced, in place, by the
    id of the enclosing query's column, read as ``OUTER.id``."""
    own = own_aliases(query)
    lambdas = {p.name.lower() for lam in query.find_all(exp.Lambda) for p in lam.expressions}
    for column in list(query.find_all(exp.Column)):
        if not column.table or column.table.lower() in own or column.name.lower() in lambdas:
            continue
        column_id, _ = scope.resolve(column)
        column_id = read_as.get(column_id, column_id)
        if column_id not in available:
            raise UnsupportedSqlError(
                f"{column.sql(dialect='spark')} reads a query further "
                "out than the one around the subquery",
                *position(column),
            )
        column.replace(
            exp.Column(
                this=exp.to_identifier(column_id, quoted=True), table=exp.to_identifier(OUTER)
            )
        )


def _outer_columns(expression: exp.Expression, read_as: dict[str, str]) -> exp.Expression:
    """A bound expression (its columns ids) reading them as ``OUTER.id``."""

    def qualify(found: exp.Expression) -> exp.Expression:
        if isinstance(found, exp.Column) and not found.table:
            name = read_as.get(found.name, found.name)
            return exp.Column(
                this=exp.to_identifier(name, quoted=True), table=exp.to_identifier(OUTER)
            )
        return found

    return expression.copy().transform(qualify, copy=False)
