"""Subqueries in every position a planner must decorrelate: EXISTS, NOT EXISTS, IN, NOT IN
(one column or several) and scalar subqueries, in WHERE under AND, OR, NOT and CASE, in the
SELECT list, in HAVING and in a join's ON; uncorrelated, or correlated by equality, by a
non-equality, by several columns, or nested so that the inner one names a column two levels
out.

Those are the shapes a rewrite into semi, anti and outer joins gets wrong: the NULLs of NOT IN,
the count of an empty correlated group (0, not NULL), a correlation that is not an equality.
A scalar subquery always aggregates without GROUP BY, so it yields exactly one row.
"""

from __future__ import annotations

from sqlglot import exp

from examples.fuzzing.expressions import Ref, comparable

__all__ = ["condition", "having_condition", "select_item", "subquery_query"]

_CORRELATIONS = ("none", "equal", "equal", "not_equal", "columns", "nested")


def subquery_query(g) -> exp.Select:
    """A query whose subquery sits in WHERE, in the SELECT list, in HAVING or in a join's ON."""
    from examples.fuzzing import clauses

    rng = g.rng
    g.families = g.families | {"subqueries"}
    position = rng.choice(["where", "where", "select", "having", "on"])
    if position == "on":
        query, scope, _ = g.from_clause(2, force_join=True)
        join = query.args["joins"][-1]
        on = join.args.get("on") or exp.true()
        join.set("on", g.combine(on, condition(g, scope)))
        join.set("kind", None if join.args.get("kind") == "CROSS" else join.args.get("kind"))
        items = [g.item(scope) for _ in range(rng.randint(1, 3))]
        return g.project(g.where(query, scope, 0.3), items)
    if position == "having":
        query, scope, _ = g.from_clause(1)
        keys = [r for r in rng.sample(scope, rng.randint(1, 2))]
        calls = [clauses.aggregate_call(g, scope) for _ in range(rng.randint(1, 2))]
        query = query.group_by(*(k.node() for k in keys), copy=False)
        query = query.having(having_condition(g, scope, [k.node() for k in keys]))
        return g.project(query, [k.node() for k in keys] + calls)
    query, scope, _ = g.from_clause(rng.randint(1, 2))
    items = [g.item(scope) for _ in range(rng.randint(0, 2))]
    if position == "select":
        items.append(select_item(g, scope))
        return g.project(g.where(query, scope, 0.5), items)
    base = g.expressions.predicate(scope, rng.randint(0, 1))
    query = query.where(g.combine(base, condition(g, scope)))
    return g.project(query, items or [g.item(scope)])


def condition(g, outer: tuple[Ref, ...]) -> exp.Expression:
    """EXISTS, NOT EXISTS, IN, NOT IN (perhaps of several columns) or a comparison with a
    scalar subquery, correlated with ``outer`` or not."""
    g.used.add("subqueries")
    rng = g.rng
    pick = rng.randrange(6)
    if pick <= 1:
        found = exp.Exists(this=inner_query(g, outer, [exp.Literal.number(1)])[0])
        return exp.not_(found) if pick == 1 else found
    if pick <= 3:
        return membership(g, outer, negated=pick == 3)
    if pick == 4 and len(outer) > 1:
        return membership(g, outer, negated=rng.random() < 0.4, width=2)
    return scalar_comparison(g, outer)


def membership(g, outer: tuple[Ref, ...], negated: bool, width: int = 1) -> exp.Expression:
    """``x IN (SELECT y ...)``, or ``(x1, x2) IN (SELECT y1, y2 ...)``; NOT IN when
    ``negated``, where a NULL among the y makes the condition never true."""
    rng = g.rng
    spec = g.table()
    picked = rng.sample(outer, min(width, len(outer)))
    probes, wanted = [], []
    for ref in picked:
        kinds = comparable(ref.kind)
        same = [c for c in spec.columns if c.name == ref.name]
        fitting = same or [c for c in spec.columns if c.kind in kinds]
        if not fitting:
            return scalar_comparison(g, outer)
        probes.append(ref.node())
        wanted.append(rng.choice(fitting).name)
    query, alias = inner_query(g, outer, None, spec=spec)
    query.select(*(exp.column(name, table=alias) for name in wanted), append=False, copy=False)
    this = probes[0] if len(probes) == 1 else exp.Tuple(expressions=probes)
    found = exp.In(this=this, query=exp.Subquery(this=query))
    return exp.not_(found) if negated else found


def scalar_comparison(g, outer: tuple[Ref, ...]) -> exp.Expression:
    """An outer value compared with a scalar subquery's aggregate of a comparable kind."""
    rng = g.rng
    subquery, kind = scalar(g, outer)
    others = [r for r in outer if r.kind in comparable(kind)]
    left = rng.choice(others).node() if others else g.expressions.literal(kind)
    operator = rng.choice([exp.EQ, exp.NEQ, exp.LT, exp.GT, exp.LTE, exp.GTE])
    return operator(this=left, expression=subquery)


def scalar(g, outer: tuple[Ref, ...]) -> tuple[exp.Expression, str]:
    """``(SELECT agg(...) FROM ... WHERE ...)`` and the kind of its value: count (0 for an
    empty group, where a rewrite into an outer join gives NULL), sum, avg, min or max."""
    rng = g.rng
    spec = g.table()
    query, alias = inner_query(g, outer, None, spec=spec)
    column = rng.choice([c for c in spec.columns if c.kind != "boolean"])
    node = exp.column(column.name, table=alias)
    pick = rng.randrange(5)
    if pick == 0:
        call, kind = exp.Count(this=exp.Star() if rng.random() < 0.5 else node), "bigint"
    elif pick == 1 and column.kind in ("int", "bigint", "double", "decimal"):
        call, kind = rng.choice([exp.Sum, exp.Avg])(this=node), column.kind
    else:
        call, kind = rng.choice([exp.Min, exp.Max])(this=node), column.kind
    query.select(call, append=False, copy=False)
    return exp.Subquery(this=query), kind


def select_item(g, outer: tuple[Ref, ...]) -> exp.Expression:
    """A scalar subquery, or an EXISTS or IN as a boolean value, as a select item."""
    g.used.add("subqueries")
    if g.rng.random() < 0.5:
        return scalar(g, outer)[0]
    return condition(g, outer)


def having_condition(g, scope: tuple[Ref, ...], keys: list[exp.Expression]) -> exp.Expression:
    """A HAVING condition with a subquery: an aggregate compared with a scalar subquery, or a
    grouping key (a column) IN or NOT IN a subquery, correlated by the keys."""
    from examples.fuzzing.clauses import aggregate_call

    rng = g.rng
    key_refs = tuple(
        r
        for r in scope
        if any(isinstance(k, exp.Column) and k.name == r.name and k.table == r.alias for k in keys)
    )
    if key_refs and rng.random() < 0.5:
        return membership(g, key_refs, negated=rng.random() < 0.4)
    subquery, kind = scalar(g, key_refs)
    call = aggregate_call(g, scope)
    if kind not in ("int", "bigint", "double", "decimal"):
        call = exp.Count(this=exp.Star())
        subquery = exp.Subquery(this=exp.select(exp.Count(this=exp.Star())).from_(g.source()[0]))
    operator = rng.choice([exp.GT, exp.LT, exp.GTE, exp.NEQ])
    return operator(this=call, expression=subquery)


def inner_query(g, outer: tuple[Ref, ...], items, spec=None) -> tuple[exp.Select, str]:
    """``SELECT items FROM spec AS alias WHERE ...``: a local condition perhaps, and a
    correlation with ``outer`` drawn from ``_CORRELATIONS``. The query and its alias."""
    rng = g.rng
    table, inner = g.source(spec)
    alias = inner[0].alias
    query = exp.select(*(items or [exp.Literal.number(1)])).from_(table)
    parts = []
    if rng.random() < 0.5:
        parts.append(g.expressions.atom(inner))
    correlation = rng.choice(_CORRELATIONS) if outer else "none"
    if correlation in ("equal", "columns"):
        parts.extend(_correlations(g, inner, outer, 1 if correlation == "equal" else 2, exp.EQ))
    elif correlation == "not_equal":
        operator = rng.choice([exp.LT, exp.GT, exp.NEQ, exp.LTE])
        parts.extend(_correlations(g, inner, outer, 1, operator))
    elif correlation == "nested":
        deeper_table, deeper_scope = g.source()
        links = _correlations(g, deeper_scope, inner, 1, exp.EQ)
        if rng.random() < 0.3:  # two levels out: Spark takes only some
            links += _correlations(g, deeper_scope, outer, 1, exp.EQ)
        deeper = exp.select(exp.Literal.number(1)).from_(deeper_table)
        if links:
            deeper = deeper.where(exp.and_(*links), copy=False)
        found = exp.Exists(this=deeper)
        parts.append(found if rng.random() < 0.7 else exp.not_(found))
    if parts:
        query = query.where(exp.and_(*parts), copy=False)
    return query, alias


def _correlations(
    g, inner: tuple[Ref, ...], outer: tuple[Ref, ...], count: int, operator
) -> list[exp.Expression]:
    """Up to ``count`` comparisons of an inner column with an outer one, same name first."""
    rng = g.rng
    pairs = [(i, o) for i in inner for o in outer if i.name == o.name] or [
        (i, o) for i in inner for o in outer if i.kind in comparable(o.kind)
    ]
    rng.shuffle(pairs)
    chosen, seen = [], set()
    for i, o in pairs:
        if i.name not in seen and len(chosen) < count:
            seen.add(i.name)
            chosen.append(operator(this=i.node(), expression=o.node()))
    return chosen
