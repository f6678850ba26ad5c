"""The query families built from clauses around a FROM: aggregates, grouping sets, windows, set
operations, and the select lists of the NULL and function families (``queries`` draws the FROM,
the WHERE and the ORDER BY; ``subqueries`` the subqueries).

Each function takes the ``QueryGenerator`` and returns a query tree; the rules that keep the
answers determined are in ``queries``' docstring.
"""

from __future__ import annotations

from sqlglot import exp

from examples.fuzzing.expressions import NUMERIC, Ref

__all__ = ["aggregate", "function_items", "grouping_sets", "null_items", "set_operation", "windows"]

_ORDERABLE = ("int", "bigint", "double", "decimal", "date", "timestamp", "string")


def aggregate_call(g, scope: tuple[Ref, ...]) -> exp.Expression:
    """count(*), count, count(DISTINCT), sum, avg, min or max of a value of the scope."""
    rng = g.rng
    pick = rng.randrange(7)
    if pick == 0:
        return exp.Count(this=exp.Star())
    if pick in (1, 2):
        kind = rng.choice(sorted({r.kind for r in scope}))
        value = g.expressions.value(kind, scope, 1)
        if pick == 2:
            value = exp.Distinct(expressions=[value])
        return exp.Count(this=value)
    if pick in (3, 4):
        kind = rng.choice([k for k in NUMERIC if any(r.kind == k for r in scope)] or ["int"])
        value = g.expressions.value(kind, scope, 1)
        if rng.random() < 0.15:
            value = exp.Distinct(expressions=[value])
        return exp.Sum(this=value) if pick == 3 else exp.Avg(this=value)
    kind = rng.choice(sorted({r.kind for r in scope if r.kind in _ORDERABLE}) or ["int"])
    value = g.expressions.value(kind, scope, 1)
    return exp.Min(this=value) if pick == 5 else exp.Max(this=value)


def _keys(g, scope: tuple[Ref, ...], count: int) -> list[exp.Expression]:
    """Grouping keys: distinct columns, now and then an expression of one."""
    refs = g.rng.sample(scope, min(count, len(scope)))
    keys = []
    for ref in refs:
        if g.rng.random() < 0.2 and ref.kind in ("string", "int", "date"):
            key = {
                "string": lambda: exp.func("upper", ref.node()),
                "int": lambda: exp.Mod(this=ref.node(), expression=exp.Literal.number(3)),
                "date": lambda: exp.func("month", ref.node()),
            }[ref.kind]()
            keys.append(key)
        else:
            keys.append(ref.node())
    return keys


def _having(g, query: exp.Select, scope: tuple[Ref, ...], keys: list) -> exp.Select:
    rng = g.rng
    if rng.random() >= 0.4:
        return query
    call = aggregate_call(g, scope)
    condition = rng.choice([exp.GT, exp.GTE, exp.LT, exp.NEQ])(
        this=call, expression=exp.Literal.number(rng.randint(0, 3))
    )
    if isinstance(call, (exp.Min, exp.Max)):
        condition = exp.not_(exp.Is(this=call, expression=exp.null()))
    if g.on("subqueries", 0.3):
        from examples.fuzzing.subqueries import having_condition

        condition = g.combine(condition, having_condition(g, scope, keys))
    return query.having(condition)


def aggregate(g) -> exp.Select:
    """GROUP BY one or two keys (or none: one row, even over no rows), one to three aggregates,
    perhaps HAVING and DISTINCT."""
    rng = g.rng
    query, scope, _ = g.from_clause(rng.randint(1, 2))
    query = g.where(query, scope, 0.5)
    keys = _keys(g, scope, rng.choice([0, 1, 1, 2, 2]))
    calls = [aggregate_call(g, scope) for _ in range(rng.randint(1, 3))]
    items = [k.copy() for k in keys if rng.random() < 0.85] + calls
    if keys:
        query = query.group_by(*keys, copy=False)
        query = _having(g, query, scope, keys)
    if rng.random() < 0.1:
        query = query.distinct()
    return g.project(query, items)


def grouping_sets(g) -> exp.Select:
    """GROUPING SETS, ROLLUP, CUBE or a plain key with a ROLLUP or CUBE after it, over two or
    three keys; the keys, aggregates, and GROUPING() or GROUPING_ID() selected."""
    rng = g.rng
    query, scope, _ = g.from_clause(rng.randint(1, 2))
    query = g.where(query, scope, 0.4)
    keys = _keys(g, scope, rng.randint(2, 3))
    form = rng.randrange(4)
    if form == 0:
        sets, wanted = set(), rng.randint(2, 3)
        while len(sets) < wanted:
            sets.add(tuple(sorted(rng.sample(range(len(keys)), rng.randint(0, len(keys))))))
        used = sorted({i for chosen in sets for i in chosen})
        group = [
            exp.GroupingSets(
                expressions=[
                    exp.Tuple(expressions=[keys[i].copy() for i in chosen])
                    for chosen in sorted(sets)
                ]
            )
        ]
        keys = [keys[i] for i in used] or keys[:0]  # a key in no set is no key of the query
    elif form in (1, 2):
        kind = exp.Rollup if form == 1 else exp.Cube
        group = [kind(expressions=[k.copy() for k in keys])]
    else:
        kind = rng.choice([exp.Rollup, exp.Cube])
        group = [keys[0].copy(), kind(expressions=[k.copy() for k in keys[1:]])]
    items = [k.copy() for k in keys] + [aggregate_call(g, scope) for _ in range(rng.randint(1, 2))]
    if keys and rng.random() < 0.6:
        items.append(exp.func("grouping", rng.choice(keys).copy()))
    if rng.random() < 0.5:
        items.append(exp.func("grouping_id"))
    query.set("group", exp.Group(expressions=group))
    query = _having(g, query, scope, keys)
    return g.project(query, items)


def windows(g) -> exp.Select:
    """One to three window functions beside a few columns, over one table or a join."""
    rng = g.rng
    query, scope, ids = g.from_clause(rng.randint(1, 2))
    query = g.where(query, scope, 0.4)
    items = [
        g.expressions.value(rng.choice(sorted({r.kind for r in scope})), scope, 0)
        for _ in range(rng.randint(0, 2))
    ]
    items += [window(g, scope, ids) for _ in range(rng.randint(1, 3))]
    return g.project(query, items)


def window(g, scope: tuple[Ref, ...], ids: tuple[Ref, ...]) -> exp.Expression:
    rng = g.rng
    partition = [r.node() for r in rng.sample(scope, rng.choice([0, 1, 1, 2]))]
    orderable = [r for r in scope if r.kind in _ORDERABLE]
    keys = [_ordered(g, r.node()) for r in rng.sample(orderable, rng.randint(1, 2))]
    total = keys + [_ordered(g, r.node()) for r in ids]
    pick = rng.randrange(7)
    spec = None
    if pick == 0:
        function, order = exp.func("row_number"), total
    elif pick == 1:
        function, order = exp.func(rng.choice(["rank", "dense_rank"])), keys
    elif pick == 2:
        ref = rng.choice(scope)
        arguments = [ref.node(), exp.Literal.number(rng.randint(1, 2))]
        if rng.random() < 0.3:
            arguments.append(g.expressions.literal(ref.kind))
        function, order = exp.func(rng.choice(["lag", "lead"]), *arguments), total
    else:
        function = aggregate_call(g, scope)
        if isinstance(function.this, exp.Distinct):
            function = exp.Count(this=exp.Star())
        frame = rng.randrange(4)
        if frame == 0:
            order = []  # the whole partition
        elif frame == 1:
            order = keys  # RANGE UNBOUNDED PRECEDING to CURRENT ROW: ties are peers
        elif frame == 2:
            order = total
            start, end = (
                rng.choice([("1", "PRECEDING"), ("UNBOUNDED", "PRECEDING"), ("CURRENT ROW", None)]),
                rng.choice([("CURRENT ROW", None), ("1", "FOLLOWING"), ("UNBOUNDED", "FOLLOWING")]),
            )
            spec = exp.WindowSpec(
                kind="ROWS", start=start[0], start_side=start[1], end=end[0], end_side=end[1]
            )
        else:
            numbers = [r for r in scope if r.kind in ("int", "decimal")]
            ref = rng.choice(numbers) if numbers else None
            order = [_ordered(g, ref.node())] if ref else keys
            if ref is not None:
                spec = exp.WindowSpec(
                    kind="RANGE",
                    start=str(rng.randint(0, 3)),
                    start_side="PRECEDING",
                    end=rng.choice(["CURRENT ROW", str(rng.randint(1, 2))]),
                    end_side=None,
                )
                if spec.args["end"] != "CURRENT ROW":
                    spec.set("end_side", "FOLLOWING")
    window_node = exp.Window(
        this=function,
        partition_by=partition or None,
        order=exp.Order(expressions=order) if order else None,
        spec=spec,
    )
    return window_node


def _ordered(g, node: exp.Expression) -> exp.Ordered:
    return exp.Ordered(this=node, desc=g.rng.random() < 0.3, nulls_first=g.rng.random() < 0.5)


def set_operation(g) -> exp.Query:
    """Two or three SELECTs of the same kinds of columns, joined by UNION, INTERSECT or EXCEPT,
    each ALL or DISTINCT."""
    rng = g.rng
    kinds = [
        rng.choice(["int", "string", "decimal", "date", "int"]) for _ in range(rng.randint(1, 3))
    ]

    def branch() -> exp.Select:
        query, scope, _ = g.from_clause(1)
        items = [g.expressions.value(kind, scope, rng.randint(0, 1)) for kind in kinds]
        return g.project(g.where(query, scope, 0.6), items)

    result: exp.Query = branch()
    for _ in range(rng.randint(1, 2)):
        operator = rng.choice([exp.union, exp.intersect, exp.except_])
        if isinstance(result, exp.SetOperation):  # in parentheses: sqlglot writes none, and
            result = exp.Subquery(this=result)  # INTERSECT binds tighter than UNION
        operands = [result, branch()] if rng.random() < 0.7 else [branch(), result]
        result = operator(*operands, distinct=rng.random() < 0.5)
    return result


def null_items(g, scope: tuple[Ref, ...]) -> list[exp.Expression]:
    """CASE, coalesce, nullif, null tests and NOT IN lists holding NULL, as select items."""
    rng, expressions = g.rng, g.expressions
    items = []
    for _ in range(rng.randint(1, 4)):
        ref = rng.choice(scope)
        pick = rng.randrange(5)
        if pick == 0:
            items.append(expressions.case(ref.kind, scope, 1))
        elif pick == 1:
            others = [r.node() for r in scope if r.kind == ref.kind and r != ref]
            items.append(
                exp.func("coalesce", ref.node(), *others[:1], expressions.literal(ref.kind))
            )
        elif pick == 2:
            items.append(exp.func("nullif", ref.node(), expressions.literal(ref.kind)))
        elif pick == 3:
            items.append(exp.Is(this=ref.node(), expression=exp.null()))
        else:
            listed = [expressions.literal(ref.kind), exp.null()]
            items.append(exp.not_(exp.In(this=ref.node(), expressions=listed)))
    return items


def function_items(g, scope: tuple[Ref, ...]) -> list[exp.Expression]:
    """String, date and decimal functions and arithmetic, and LIKE, as select items."""
    rng, expressions = g.rng, g.expressions
    builders = [
        name
        for name, kind in (
            ("_string", "string"),
            ("_date", "date"),
            ("_decimal", "decimal"),
            ("_int", "int"),
        )
        if any(r.kind == kind for r in scope)
    ]
    items = []
    for _ in range(rng.randint(1, 4)):
        if not builders or rng.random() < 0.15:
            items.append(expressions.atom(scope, 1))
        else:
            items.append(getattr(expressions, rng.choice(builders))(scope, 1))
    return items
