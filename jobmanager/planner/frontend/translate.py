"""A qualified sqlglot tree becomes a logical plan (``jobmanager.planner.logical``).

Each SELECT is translated as Spark's analyzer reads it: FROM and its joins (as written: the
planner orders inner joins later), WHERE (its subqueries become semi, anti, single or left
joins: ``jobmanager.planner.frontend.subqueries``), GROUP BY and aggregates, HAVING, window
functions, the projection, DISTINCT, ORDER BY, LIMIT and OFFSET. A CTE is translated once, the
first time it is read, and every reference reads that same node under new column ids: a CTE
used twice is computed once. Set operations widen each column to one type, as Spark does.
"""

from __future__ import annotations


from sqlglot import exp

import re

from jobmanager.errors import SqlError, TidalError, UnsupportedSqlError
from jobmanager.planner.catalog import Catalog
from jobmanager.planner.expressions import check_condition, is_generator, type_of
from jobmanager.planner.frontend.grouping import aggregate_calls, aggregated, with_windows
from jobmanager.planner.frontend.grouping_sets import expand, grouping_sets, over_sets
from jobmanager.planner.logical import (
    Aggregate,
    Filter,
    IdAllocator,
    Node,
    OneRow,
    Project,
    col,
    conjoin,
    conjuncts,
    references,
)
from jobmanager.planner.frontend.ordering import (
    limited,
    order_items,
    order_keys,
    ordered_relation,
    rekeyed,
)
from jobmanager.planner.frontend.parse import projection_name
from jobmanager.planner.frontend.relations import SET_OPERATIONS, Relation, Relations
from jobmanager.planner.frontend.scope import Scope, position
from jobmanager.planner.frontend.whole_query import reads_enclosing, whole_query
from jobmanager.planner.frontend.subqueries import (
    Correlation,
    Pending,
    attach,
    require_equalities,
    semi_or_anti,
)

__all__ = ["Relation", "Translator"]

_QUOTED = re.compile(r"'([^']+)'")


class Translator:
    """``text``: the user's query, to tell their names from the planner's in an error."""

    def __init__(self, catalog: Catalog, ids: IdAllocator | None = None, text: str = "") -> None:
        self.catalog = catalog
        self.ids = ids or IdAllocator()
        self.text = text.lower()
        self.relations = Relations(catalog, self.ids, self.query)

    def query(
        self,
        query: exp.Expression,
        outer: Scope | None = None,
        correlation: Correlation | None = None,
    ) -> Relation:
        """``query`` planned; a query the planner cannot cut that reads nothing of the queries
        around it runs whole (``whole_query``), so only an error Spark would raise remains."""
        entered = False
        try:
            self.relations.enter(query)
            entered = True
            return self._query(query, outer, correlation)
        except Exception as error:  # noqa: BLE001 - any failure to cut it, told apart below
            reason = self._uncut(error)
            if reason is None or reads_enclosing(query):
                raise
            return whole_query(query, reason, self.relations, self.ids)
        finally:
            if entered:
                self.relations.leave()

    def _uncut(self, error: Exception) -> str | None:
        """Why a query that failed to translate should run whole, or None when the error is
        the query's own (Spark would refuse it too) or not the planner's to handle."""
        if isinstance(error, UnsupportedSqlError):
            return str(error)
        if isinstance(error, SqlError):
            named = _QUOTED.findall(str(error))
            return (
                f"the planner lost a column it made ({error})"
                if named and named[0].lower() not in self.text
                else None
            )
        if isinstance(error, TidalError):
            return None
        return f"the planner failed on it ({type(error).__name__}: {error}); a bug in Tidal"

    def _query(
        self, query: exp.Expression, outer: Scope | None, correlation: Correlation | None
    ) -> Relation:
        if isinstance(query, exp.Select):
            return self._select(query, outer, correlation)
        if isinstance(query, exp.Subquery):
            return ordered_relation(query, self.query(query.this, outer, correlation))
        if type(query) in SET_OPERATIONS:
            if correlation is not None and _reads_outer(query, outer):
                raise UnsupportedSqlError("a correlated set operation", *position(query))
            return ordered_relation(query, self.relations.set_operation(query, outer))
        raise UnsupportedSqlError(f"{query.key.upper()} is not supported here", *position(query))

    # -- SELECT ---------------------------------------------------------------------------------

    def _select(
        self, select: exp.Select, outer: Scope | None, correlation: Correlation | None
    ) -> Relation:
        if any(_generates(p) for p in select.expressions):
            _as_lateral_views(select)  # so the query, run whole, names each of its columns
            raise UnsupportedSqlError(
                "a generator (its rows replace the row it reads, which "
                "the planner's projections do not)",
                *position(select),
            )
        scope = Scope(outer)
        node = (
            self.relations.from_clause(select, scope)
            if select.args.get("from_")
            else OneRow((), "SELECT")
        )
        where = select.args.get("where")
        if where is not None:
            node = self._where(node, where.this, scope, correlation)
        names = [projection_name(p) for p in select.expressions]
        pending: list[Pending] = []
        hook = self._scalar_hook(pending)
        bound = [scope.bind(_unaliased(p), hook).expression for p in select.expressions]
        having = select.args.get("having")
        extras = [scope.bind(having.this, hook).expression] if having else []
        groups, aggregating, sets = self._grouping(select, scope, correlation, bound + extras)
        order_bound = order_keys(
            order_items(select), scope, names, bound, [p.alias_or_name for p in select.expressions]
        )
        pre_order = [e for e, is_output in order_bound if not is_output]
        keys_read_as: dict[str, str] = {}  # a grouping set's key column: its nulled one
        if aggregating:
            selected = bound + extras + pre_order
            if sets is not None:
                node, groups, selected = self._expanded(node, groups, sets, selected, select)
                keys_read_as = {k.name: i for i, k in node.keys if isinstance(k, exp.Column)}
            node, rewritten = _checked(
                lambda: aggregated(node, groups, selected, self.ids, _origin_group(select)), select
            )
            bound, extras, pre_order = _split(rewritten, len(bound), len(extras))
            if correlation is not None and correlation.group_keys and correlation.conjuncts:
                correlation.keys = [
                    (gid, outer) for (gid, _), (_, outer) in zip(node.groups, correlation.keys)
                ]
        node = attach(self, node, pending, scope, keys_read_as)
        if extras:
            check_condition(extras[0], node.typer(), "HAVING")
            node = Filter(
                node.columns, f"HAVING {having.this.sql(dialect='spark')}", node, extras[0]
            )
        node, windowed = with_windows(node, bound + pre_order, self.ids)
        bound, pre_order = windowed[: len(bound)], windowed[len(bound) :]
        return self._project(select, node, names, bound, order_bound, pre_order, correlation)

    def _expanded(
        self, node: Node, keys: list, sets: list, selected: list, select: exp.Select
    ) -> tuple[Node, list, list]:
        """The rows once per grouping set, the aggregate's groups (the keys, the id and any
        position) and the selected expressions over the expanded rows."""
        node = expand(node, keys, sets, self.ids, _origin_group(select))
        groups = (
            [col(i) for i, _ in node.keys] + [col(node.gid)] + ([col(node.pos)] if node.pos else [])
        )
        return node, groups, [over_sets(e, node) for e in selected]

    def _grouping(
        self, select: exp.Select, scope: Scope, correlation: Correlation | None, selected: list
    ) -> tuple[list, bool, list | None]:
        """The GROUP BY keys bound, whether the SELECT aggregates at all, and its grouping
        sets (None without ROLLUP, CUBE or GROUPING SETS); a correlated scalar subquery groups
        by the inner side of its correlation instead."""
        group = select.args.get("group") or exp.Group()
        found = grouping_sets(group)
        keys, sets = found if found is not None else (group.expressions, None)
        groups = [scope.bind(g).expression for g in keys]
        aggregating = bool(groups) or bool(aggregate_calls(selected)) or sets is not None
        if correlation is None or not correlation.conjuncts:
            return groups, aggregating, sets
        if sets is not None:
            raise UnsupportedSqlError("a correlated subquery with grouping sets", *position(group))
        if correlation.group_keys:
            return (
                *self._correlation_groups(correlation, scope, groups, select.args.get("where")),
                None,
            )
        if aggregating:
            raise UnsupportedSqlError(
                "a correlated EXISTS or IN subquery that aggregates is not supported yet",
                *position(select),
            )
        return groups, aggregating, None

    def _project(self, select, node, names, bound, order_bound, pre_order, correlation):
        exprs = self._named(names, bound)
        if correlation is not None:
            _add_correlated(exprs, dict(node.columns), correlation)
        kept = len(exprs)  # what the query gives: its projection and what a join needs of it
        hidden = self._hidden(exprs, pre_order)
        node = Project(
            _typed(select, exprs, node), "SELECT " + ", ".join(names), node, tuple(exprs)
        )
        node = _distinct(select, node, hides_order_keys=len(exprs) > kept)
        hidden_ids = iter(hidden)
        keys = [
            rekeyed(ordered, expression if is_output else col(next(hidden_ids)))
            for (expression, is_output), ordered in zip(order_bound, order_items(select))
        ]
        node = limited(select, node, keys)
        if len(exprs) > kept:
            node = Project(
                node.columns[:kept], node.origin, node, tuple((i, col(i)) for i, _ in exprs[:kept])
            )
        return Relation(node, tuple(names))

    def _named(self, names, bound) -> list[tuple[str, exp.Expression]]:
        """The projection with an id each: a plain column keeps its id (once), anything else
        gets a new one after its name."""
        used: set[str] = set()
        exprs = []
        for name, expression in zip(names, bound):
            reuse = isinstance(expression, exp.Column) and expression.name not in used
            column_id = expression.name if reuse else self.ids.new(name)
            used.add(column_id)
            exprs.append((column_id, expression))
        return exprs

    def _hidden(self, exprs: list, pre_order: list) -> list[str]:
        """The ids of the ORDER BY keys that are not in the projection, added to ``exprs``
        (hidden: a projection on top drops them after the sort)."""
        hidden = []
        for expression in pre_order:
            match = next((i for i, e in exprs if e == expression), None)
            if match is None:
                match = self.ids.new("_o")
                exprs.append((match, expression))
            hidden.append(match)
        return hidden

    def _correlation_groups(self, correlation: Correlation, scope: Scope, groups, where):
        if groups:
            raise UnsupportedSqlError(
                "a correlated scalar subquery with GROUP BY is not supported", *position(where)
            )
        outer_ids = set(scope.outer.types) if scope.outer else set()
        keys = require_equalities(correlation, outer_ids, where)
        correlation.keys = [("", outer) for _, outer in keys]
        return [inner for inner, _ in keys], True

    # -- FROM and WHERE -------------------------------------------------------------------------

    def _where(
        self, node: Node, condition: exp.Expression, scope: Scope, correlation: Correlation | None
    ) -> Node:
        condition_text = condition
        filters, pending = [], []
        hook = self._scalar_hook(pending)
        for conjunct in conjuncts(condition):
            joined = semi_or_anti(self, node, conjunct, scope)
            if joined is not None:
                node = joined
                continue
            bound = scope.bind(conjunct, hook)
            if bound.outer:
                if correlation is None:
                    raise UnsupportedSqlError(
                        "a column of an enclosing query here", *position(conjunct)
                    )
                correlation.conjuncts.append(bound.expression)
                continue
            filters.append(bound.expression)
        node = attach(self, node, pending, scope)
        if filters:
            condition = conjoin(filters)
            _checked(lambda: check_condition(condition, node.typer(), "WHERE"), condition_text)
            node = Filter(
                node.columns,
                "WHERE " + " AND ".join(f.sql(dialect="spark") for f in filters),
                node,
                condition,
            )
        return node

    def _scalar_hook(self, pending: list[Pending]):
        def hook(subquery: exp.Expression) -> exp.Expression:
            placeholder = self.ids.new("_sq")
            pending.append(Pending(placeholder, subquery, not isinstance(subquery, exp.Subquery)))
            return col(placeholder)

        return hook

    # -- set operations -------------------------------------------------------------------------


def _checked(check, where: exp.Expression):
    """``check()``, its type error placed at ``where`` in the user's text."""
    try:
        return check()
    except SqlError as error:
        if error.line is not None:
            raise
        line, column = position(where)
        raise type(error)(str(error), line, column) from None


def _split(values: list, *sizes: int) -> list[list]:
    """``values`` cut into consecutive pieces of ``sizes``, then the rest."""
    pieces, start = [], 0
    for size in sizes:
        pieces.append(values[start : start + size])
        start += size
    return [*pieces, values[start:]]


def _add_correlated(exprs: list, types: dict, correlation: Correlation) -> None:
    """What a join with the enclosing query needs of this SELECT: the columns its correlated
    conditions read and its grouping keys, each once."""
    wanted = set().union(*[references(c) for c in correlation.conjuncts])
    for column_id in sorted(wanted):
        if column_id in types and all(i != column_id for i, _ in exprs):
            exprs.append((column_id, col(column_id)))
    for gid, _ in correlation.keys or ():
        if all(i != gid for i, _ in exprs):
            exprs.append((gid, col(gid)))


def _typed(select: exp.Select, exprs: list, node: Node) -> tuple:
    """The projection's columns with their types, a type error placed at its expression."""
    typer = node.typer()
    places = list(select.expressions) + [select] * (len(exprs) - len(select.expressions))
    columns = []
    for (column_id, expression), place in zip(exprs, places):
        _checked(lambda c=column_id, e=expression: columns.append((c, type_of(e, typer))), place)
    return tuple(columns)


def _distinct(select: exp.Select, node: Node, hides_order_keys: bool) -> Node:
    distinct = select.args.get("distinct")
    if distinct is None:
        return node
    if distinct.args.get("on"):
        raise UnsupportedSqlError("DISTINCT ON is not supported", *position(distinct))
    if hides_order_keys:
        raise SqlError(
            "with SELECT DISTINCT, ORDER BY may only name selected columns", *position(select)
        )
    return Aggregate(
        node.columns, "SELECT DISTINCT", node, tuple((i, col(i)) for i in node.ids), ()
    )


def _generates(projection: exp.Expression) -> bool:
    """Whether ``projection`` calls a generator (``EXPLODE``, ``POSEXPLODE``, ``INLINE``,
    ``STACK``, ``JSON_TUPLE``), not inside a subquery of its own."""
    return any(
        is_generator(node) for node in projection.walk(prune=lambda n: isinstance(n, exp.Query))
    )


def _as_lateral_views(select: exp.Select) -> None:
    """Each generator of several columns (``POSEXPLODE(a) AS (pos, col)``) in ``select``'s
    projection moved, in place, to a ``LATERAL VIEW`` whose columns the projection reads."""
    items = []
    for projection in select.expressions:
        if not isinstance(projection, exp.Aliases):
            items.append(projection)
            continue
        view = f"__generated{len(select.args.get('laterals') or [])}"
        names = [a.copy() for a in projection.expressions]
        select.append(
            "laterals",
            exp.Lateral(
                this=projection.this.copy(),
                view=True,
                outer=False,
                alias=exp.TableAlias(this=exp.to_identifier(view), columns=names),
            ),
        )
        items += [exp.column(n.name, view, quoted=n.quoted) for n in names]
    select.set("expressions", items)


def _unaliased(projection: exp.Expression) -> exp.Expression:
    return projection.this if isinstance(projection, exp.Alias) else projection


def _origin_group(select: exp.Select) -> str:
    """The GROUP BY and the aggregates, as the query wrote them."""
    group = select.args.get("group")
    calls = aggregate_calls([_unaliased(p) for p in select.expressions])
    text = ", ".join(c.sql(dialect="spark") for c in calls)
    if group is None:
        return text or "SELECT DISTINCT"
    return group.sql(dialect="spark") + (f": {text}" if text else "")


def _reads_outer(query: exp.Expression, outer: Scope | None) -> bool:
    return outer is not None and any(
        c.table and c.table.lower() in outer.relations for c in query.find_all(exp.Column)
    )
