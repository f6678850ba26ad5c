"""What a FROM clause and a set operation build: scans of the catalogue's tables, a CTE's one
translation read under new column ids by every reference, derived tables, VALUES, joins as
written (inner joins are ordered later, by ``jobmanager.planner.rules.joins``), and set operations
with each column widened to one type on both sides, as Spark widens them.

A CTE is translated the first time it is read, in the scope it was defined in; every later
reference reads that same node, so a CTE used twice is computed once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

from jobmanager.errors import SqlError, UnsupportedSqlError
from jobmanager.planner.catalog import Catalog
from jobmanager.planner.expressions import check_condition, type_of
from jobmanager.planner.frontend.scope import Scope, position
from jobmanager.planner.logical import (
    IdAllocator,
    Join,
    Node,
    Project,
    Scan,
    SetOp,
    Values,
    col,
)
from jobmanager.planner.types import wider

__all__ = ["SET_OPERATIONS", "Relation", "Relations"]

SET_OPERATIONS = {exp.Union: "union", exp.Intersect: "intersect", exp.Except: "except"}


@dataclass(frozen=True)
class Relation:
    """A translated query: its plan and the names its columns have for the user."""

    node: Node
    names: tuple[str, ...]


class _Cte:
    """A CTE's definition, and its translation once it was first read."""

    def __init__(self, definition: exp.CTE) -> None:
        self.definition = definition
        self.relation: Relation | None = None
        self.translating = False


class Relations:
    """Builds FROM clauses and set operations for a translator; ``query`` translates a query
    (a derived table, a CTE, a side of a set operation) in a scope."""

    def __init__(self, catalog: Catalog, ids: IdAllocator, query: Callable) -> None:
        self.catalog = catalog
        self.ids = ids
        self._query = query
        self._ctes: list[dict[str, _Cte]] = []

    def enter(self, query: exp.Expression) -> None:
        """The CTEs of ``query`` come into scope (until ``leave``)."""
        with_ = query.args.get("with_")
        if with_ is not None and with_.args.get("recursive"):
            raise UnsupportedSqlError("recursive CTEs are not supported", *position(with_))
        self._ctes.append(
            {cte.alias_or_name.lower(): _Cte(cte) for cte in (with_.expressions if with_ else [])}
        )

    def leave(self) -> None:
        self._ctes.pop()

    def from_clause(self, select: exp.Select, scope: Scope) -> Node:
        node = self._relation(select.args["from_"].this, scope)
        for join in select.args.get("joins") or []:
            right = self._relation(join.this, scope)
            kind = _join_kind(join)
            on = join.args.get("on")
            if join.args.get("using"):
                raise UnsupportedSqlError("JOIN ... USING here", *position(join))
            condition = scope.bind(on).expression if on is not None else None
            if condition is not None:
                check_condition(condition, scope.type_of, "ON")
            if kind == "inner" and condition is None:
                kind = "cross"
            columns = node.columns if kind in ("semi", "anti") else node.columns + right.columns
            node = Join(columns, join.sql(dialect="spark"), node, right, kind, condition)
        return node

    def _relation(self, item: exp.Expression, scope: Scope) -> Node:
        alias = item.alias_or_name
        if isinstance(item, exp.Table):
            cte = self._cte(item.name)
            node, relation_names = self._cte_reference(cte, item) if cte else self._scan(item)
        elif isinstance(item, exp.Subquery):
            relation = self._query(item.this, None)
            node, relation_names = relation.node, list(relation.names)
        elif isinstance(item, exp.Values):
            node, relation_names = self._values(item)
        else:
            raise UnsupportedSqlError(
                f"{item.key.upper()} in FROM is not supported yet", *position(item)
            )
        table_alias = item.args.get("alias")
        renamed = (
            [c.name for c in table_alias.columns] if table_alias and table_alias.columns else None
        )
        if renamed:
            if len(renamed) != len(relation_names):
                raise SqlError(
                    f"{alias}: {len(renamed)} column names for {len(relation_names)} columns",
                    *position(item),
                )
            relation_names = renamed
        relation = {}
        for name, (column_id, kind) in zip(relation_names, node.columns):
            relation.setdefault(name.lower(), (column_id, kind))
        scope.add(alias, relation)
        return node

    def _scan(self, table: exp.Table) -> tuple[Node, list[str]]:
        described = self.catalog.table(table.name)
        mapping = tuple((self.ids.new(c.name), c.name) for c in described.columns)
        columns = tuple((i, c.type) for (i, _), c in zip(mapping, described.columns))
        alias = table.alias_or_name
        origin = (
            described.name
            if alias.lower() == described.name.lower()
            else f"{described.name} AS {alias}"
        )
        names = [c.name for c in described.columns]
        return Scan(columns, f"FROM {origin}", described, alias, mapping), names

    def read(self, table: exp.Table) -> tuple[Node, list[str]]:
        """What a reference to ``table`` reads: its CTE's translation, else the catalogue's
        table; and its columns' names as the qualified query names them."""
        cte = self._cte(table.name)
        if cte is None:
            return self._scan(table)
        node, _ = self._cte_reference(cte, table)
        query = cte.definition.this
        while not isinstance(query, exp.Select):
            query = query.this
        return node, [p.alias_or_name for p in query.expressions]

    def schema(self, query: exp.Expression) -> dict[str, dict[str, str]]:
        """The catalogue's tables ``query`` names, as sqlglot's schema: column to type."""
        schema = {}
        for table in query.find_all(exp.Table):
            if self.catalog.has(table.name) and self._cte(table.name) is None:
                schema[table.name.lower()] = {
                    c.name.lower(): str(c.type)
                    for c in self.catalog.table(table.name).columns
                    if c.type.is_known
                }
        return schema

    def _cte(self, name: str) -> _Cte | None:
        for level in reversed(self._ctes):
            if name.lower() in level:
                return level[name.lower()]
        return None

    def _cte_reference(self, cte: _Cte, table: exp.Table) -> tuple[Node, list[str]]:
        if cte.translating:
            raise UnsupportedSqlError(
                f"CTE {table.name!r} reads itself (recursive CTEs are not supported)",
                *position(table),
            )
        if cte.relation is None:
            cte.translating = True
            depth = len(self._ctes)
            saved, self._ctes = self._ctes, self._ctes[:depth]
            try:
                cte.relation = self._query(cte.definition.this, None)
            finally:
                self._ctes = saved
                cte.translating = False
        relation = cte.relation
        exprs = tuple(
            (self.ids.new(name), col(i)) for name, i in zip(relation.names, relation.node.ids)
        )
        columns = tuple((i, kind) for (i, _), (_, kind) in zip(exprs, relation.node.columns))
        return Project(columns, f"FROM {table.name}", relation.node, exprs), list(relation.names)

    def _values(self, values: exp.Values) -> tuple[Node, list[str]]:
        rows = [tuple(row.expressions) for row in values.expressions]
        width = len(rows[0])
        if any(len(row) != width for row in rows):
            raise SqlError("VALUES rows of different lengths", *position(values))
        alias = values.args.get("alias")
        names = (
            [c.name for c in alias.columns]
            if alias and alias.columns
            else [f"col{i + 1}" for i in range(width)]
        )
        kinds = []
        for index in range(width):
            kind = None
            for row in rows:
                value_type = type_of(row[index], lambda _: None)
                kind = value_type if kind is None else wider(kind, value_type)
            kinds.append(kind)
        ids = [self.ids.new(n) for n in names]
        return Values(tuple(zip(ids, kinds)), "VALUES", tuple(rows)), names

    def set_operation(self, query: exp.Expression, outer: Scope | None) -> Relation:
        kind = SET_OPERATIONS[type(query)]
        left = self._query(query.this, outer)
        right = self._query(query.expression, outer)
        if len(left.names) != len(right.names):
            raise SqlError(
                f"{kind.upper()} of {len(left.names)} and {len(right.names)} "
                "columns: both sides must give as many",
                *position(query),
            )
        kinds = []
        for (name, a), (_, b) in zip(left.node.columns, right.node.columns):
            widened = wider(a, b)
            if widened is None:
                raise SqlError(
                    f"{kind.upper()}: column {len(kinds) + 1} is {a} on one side "
                    f"and {b} on the other",
                    *position(query),
                )
            kinds.append(widened)
        inputs = tuple(self._cast_to(relation.node, kinds) for relation in (left, right))
        ids = [self.ids.new(name) for name in left.names]
        distinct = bool(query.args.get("distinct", True))
        node = SetOp(
            tuple(zip(ids, kinds)),
            f"{kind.upper()}{'' if distinct else ' ALL'}",
            kind,
            distinct,
            inputs,
        )
        return Relation(node, left.names)

    def _cast_to(self, node: Node, kinds) -> Node:
        if all(kind == wanted for (_, kind), wanted in zip(node.columns, kinds)):
            return node
        exprs = []
        for (column_id, kind), wanted in zip(node.columns, kinds):
            value = (
                col(column_id)
                if kind == wanted or not wanted.is_known
                else exp.Cast(
                    this=col(column_id), to=exp.DataType.build(str(wanted), dialect="spark")
                )
            )
            exprs.append((self.ids.new(column_id), value))
        columns = tuple((i, k) for (i, _), k in zip(exprs, kinds))
        return Project(columns, node.origin, node, tuple(exprs))


def _join_kind(join: exp.Join) -> str:
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind in ("SEMI", "ANTI"):
        return kind.lower()
    if side in ("LEFT", "RIGHT", "FULL"):
        return side.lower()
    if kind == "CROSS":
        return "cross"
    return "inner"
