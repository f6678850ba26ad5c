"""ORDER BY, LIMIT and OFFSET: the keys bound to a SELECT's projection or the columns before
it, and the sort or limit over a query's relation (a set operation's and a parenthesised
query's own included)."""

from __future__ import annotations

from sqlglot import exp

from jobmanager.errors import UnsupportedSqlError
from jobmanager.planner.frontend.parse import projection_name
from jobmanager.planner.frontend.relations import Relation
from jobmanager.planner.frontend.scope import Scope, position
from jobmanager.planner.logical import Limit, Node, Sort, col, substitute

__all__ = ["limited", "order_items", "order_keys", "ordered_relation", "rekeyed"]


def order_keys(
    items, scope: Scope, names, bound, qualified_names=()
) -> list[tuple[exp.Expression, bool]]:
    """Each ORDER BY key bound: (the key over the projection's ids, True) when it names a
    projection (by its name, or by the name qualification gave it); else (the key over
    the columns before the projection, False)."""
    aliases = {name.lower(): f"__out{i}" for i, name in enumerate(names)}
    aliases.update(
        {
            alias.lower(): f"__out{i}"
            for i, alias in enumerate(qualified_names)
            if alias.startswith("_col_")
        }
    )  # ORDER BY 4 qualified to its alias
    result = []
    for ordered in items:
        key = ordered.this
        if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            result.append((exp.Column(this=exp.to_identifier(aliases[key.name.lower()])), True))
            continue
        outputs = {f"__out{i}": b for i, b in enumerate(bound)}
        expression = scope.bind(key, extra=aliases).expression
        result.append((substitute(expression, outputs), False))
    return result


def limited(query, node: Node, keys: list[exp.Ordered]) -> Node:
    limit = _integer(query.args.get("limit"), "LIMIT")
    offset = _integer(query.args.get("offset"), "OFFSET") or 0
    tail = " ".join(
        query.args[k].sql(dialect="spark") for k in ("limit", "offset") if query.args.get(k)
    )
    if keys:
        ids = node.ids
        keys = [_resolve_output(k, ids) for k in keys]
        origin = _order_as_written(query) + (f" {tail}" if tail else "")
        return Sort(node.columns, origin, node, tuple(keys), limit, offset)
    if limit is not None or offset:
        return Limit(node.columns, tail, node, limit, offset)
    return node


def ordered_relation(query: exp.Expression, relation: Relation) -> Relation:
    """A set operation's (or a parenthesised query's) own ORDER BY and LIMIT."""
    items = order_items(query)
    if not items and query.args.get("limit") is None and query.args.get("offset") is None:
        return relation
    by_name = {name.lower(): i for name, i in zip(relation.names, relation.node.ids)}
    keys = []
    for ordered in items:
        key = ordered.this
        if not isinstance(key, exp.Column) or key.name.lower() not in by_name:
            raise UnsupportedSqlError(
                "ORDER BY after a set operation may only name its columns", *position(ordered)
            )
        keys.append(rekeyed(ordered, col(by_name[key.name.lower()])))
    return Relation(limited(query, relation.node, keys), relation.names)


def order_items(query: exp.Expression) -> list[exp.Ordered]:
    return list((query.args.get("order") or exp.Order()).expressions)


def rekeyed(ordered: exp.Ordered, key: exp.Expression) -> exp.Ordered:
    copy = ordered.copy()
    copy.set("this", key)
    return copy


def _resolve_output(key: exp.Ordered, ids: list[str]) -> exp.Ordered:
    """Sort keys naming the projection by position (``__out2``) name its id instead."""
    target = key.this
    if isinstance(target, exp.Column) and target.name.startswith("__out"):
        return rekeyed(key, col(ids[int(target.name[5:])]))
    return key


def _integer(clause: exp.Expression | None, what: str) -> int | None:
    if clause is None:
        return None
    value = clause.args.get("expression") or clause.this
    if not isinstance(value, exp.Literal) or value.is_string or not value.this.isdigit():
        raise UnsupportedSqlError(
            f"{what} must be a non-negative integer, not {value.sql(dialect='spark')}",
            *position(clause),
        )
    return int(value.this)


def _order_as_written(query: exp.Expression) -> str:
    """The ORDER BY as the user wrote it: a key qualification named ``_col_3`` (an ordinal,
    or an unaliased projection) by the name Spark gives that projection."""
    spark_names = {
        p.alias: projection_name(p)
        for p in getattr(query, "expressions", [])
        if isinstance(p, exp.Alias) and p.alias.startswith("_col_")
    }

    def named(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name in spark_names:
            return exp.column(spark_names[node.name], quoted=True)
        return node

    return query.args["order"].copy().transform(named, copy=False).sql(dialect="spark")
