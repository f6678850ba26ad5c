"""Names in scope while a query is translated: which relation alias holds which column id.

A subquery's scope sees its own relations first and its enclosing query's after them, one
level out; a column that resolves there is a correlation, which the translator turns into a
join condition (``jobmanager.planner.frontend.subqueries``). Binding an expression replaces each
qualified column with its id; a subquery found in it is handed to the caller, who decides
what it may be there.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Callable

from sqlglot import exp

from jobmanager.errors import UnknownColumnError, UnsupportedSqlError
from jobmanager.planner.expressions import rewrite_children
from jobmanager.planner.logical import col
from jobmanager.planner.types import SqlType

__all__ = ["Bound", "Scope", "position"]

Relation = dict[str, tuple[str, SqlType]]  # column name (lower case) -> (id, type)
SubqueryHook = Callable[[exp.Expression], exp.Expression]


@dataclass
class Bound:
    """A bound expression, and whether it read the enclosing query's columns."""

    expression: exp.Expression
    outer: bool = False


@dataclass
class Scope:
    outer: Scope | None = None
    relations: dict[str, Relation] = field(default_factory=dict)
    types: dict[str, SqlType] = field(default_factory=dict)  # every id visible here

    def add(self, alias: str, relation: Relation) -> None:
        self.relations[alias.lower()] = relation
        self.types.update({column_id: kind for column_id, kind in relation.values()})

    def type_of(self, column_id: str) -> SqlType:
        scope: Scope | None = self
        while scope is not None:
            if column_id in scope.types:
                return scope.types[column_id]
            scope = scope.outer
        from jobmanager.planner.types import UNKNOWN

        return UNKNOWN

    def bind(
        self,
        expression: exp.Expression,
        on_subquery: SubqueryHook | None = None,
        extra: dict[str, str] | None = None,
    ) -> Bound:
        """``expression`` with every column an id. ``extra`` resolves unqualified names first
        (select aliases in ORDER BY and HAVING); ``on_subquery`` replaces a subquery (scalar,
        EXISTS or IN) with what it returns, and without it a subquery is refused."""
        found_outer = False
        lambdas = {
            p.name.lower() for lam in expression.find_all(exp.Lambda) for p in lam.expressions
        }

        def replace(node: exp.Expression) -> exp.Expression:
            nonlocal found_outer
            if isinstance(node, (exp.Subquery, exp.Exists)) or (
                isinstance(node, exp.In) and node.args.get("query")
            ):
                if on_subquery is None:
                    raise UnsupportedSqlError(
                        f"a subquery here ({_short(node)}) is not supported yet", *position(node)
                    )
                return on_subquery(node)
            if not isinstance(node, exp.Column) or node.name.lower() in lambdas:
                return node
            column_id, outer = self.resolve(node, extra)
            found_outer |= outer
            return col(column_id)

        bound = _transform_outside_subqueries(expression.copy(), replace)
        return Bound(bound, found_outer)

    def resolve(self, column: exp.Column, extra: dict[str, str] | None = None) -> tuple[str, bool]:
        """The id a column names, and whether it is the enclosing query's."""
        name, table = column.name.lower(), column.table.lower()
        if not table and extra and name in extra:
            return extra[name], False
        for level, scope in enumerate(self._chain()):
            hit = scope._lookup(name, table)
            if hit is not None:
                if level > 1:
                    raise UnsupportedSqlError(
                        f"column {column.sql(dialect='spark')} refers to a "
                        "query two levels out; only a subquery's own "
                        "enclosing query may be referred to",
                        *position(column),
                    )
                return hit, level == 1
        known = sorted(
            {n for scope in self._chain() for rel in scope.relations.values() for n in rel}
            | set(extra or ())
        )
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return_name = f"{table}.{name}" if table else name
        raise UnknownColumnError(f"unknown column {return_name!r}{hint}", *position(column))

    def _lookup(self, name: str, table: str) -> str | None:
        if table:
            relation = self.relations.get(table)
            return relation[name][0] if relation and name in relation else None
        hits = [rel[name][0] for rel in self.relations.values() if name in rel]
        if len(hits) > 1:
            owners = sorted(alias for alias, rel in self.relations.items() if name in rel)
            raise UnknownColumnError(
                f"ambiguous column {name!r}: {', '.join(owners)} all have "
                f"it; qualify it, e.g. {owners[0]}.{name}"
            )
        return hits[0] if hits else None

    def _chain(self):
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.outer


def _transform_outside_subqueries(expression: exp.Expression, replace) -> exp.Expression:
    """Like ``Expression.transform``, but a subquery is handed to ``replace`` whole, never
    entered: its columns belong to its own scope."""
    replaced = replace(expression)
    if replaced is not expression:
        return replaced
    return rewrite_children(expression, lambda child: _transform_outside_subqueries(child, replace))


def position(node: exp.Expression) -> tuple[int | None, int | None]:
    """Where ``node`` starts in the user's text (line and column, from 1), when sqlglot kept
    it: sqlglot notes where each identifier ends."""
    for found in node.walk():
        meta = found.meta if isinstance(found, exp.Identifier) else {}
        if "line" in meta:
            width = len(found.this) + (2 if found.quoted else 0)
            return meta["line"], max(1, meta["col"] - width + 1)
    return None, None


def _short(node: exp.Expression) -> str:
    text = node.sql(dialect="spark")
    return text if len(text) <= 60 else text[:57] + "..."
