"""A stage's piece of the plan as one Spark SQL query over its views.

Each operator becomes a SELECT over its input's; a filter, a projection, an aggregate, a window
or an ORDER BY is folded into the SELECT below it where SQL allows (a WHERE into a plain
projection, a GROUP BY over a WHERE, an ORDER BY over a GROUP BY), so the text reads as the
query's own part. Columns are the plan's ids, quoted, so no name clashes and no keyword (a
column called ``value``) needs care. Tasks run with adaptive execution off, so each join says
how Spark should run it: the side sent whole into the stage, or the smaller side of a shuffled
join, is broadcast inside the task (``BROADCAST`` hint); a full outer join, which Spark cannot
broadcast, hashes its smaller side (``SHUFFLE_HASH``).
"""

from __future__ import annotations

from sqlglot import exp

from jobmanager.planner.logical import (
    OUTER,
    Aggregate,
    Expand,
    Filter,
    Join,
    Limit,
    Node,
    OneRow,
    Project,
    SetOp,
    Sort,
    Values,
    WholeQuery,
    SubqueryColumn,
    Window,
    col,
    substitute,
)
from jobmanager.planner.expressions import GENERATORS, is_generator
from jobmanager.planner.physical.cut import Input, Source, Stage
from jobmanager.planner.visitor import PlanVisitor

__all__ = ["stage_sql"]

_JOIN_SQL = {"inner": ("", "INNER"), "cross": ("", "CROSS"), "left": ("LEFT", "OUTER"),
             "right": ("RIGHT", "OUTER"), "full": ("FULL", "OUTER"), "semi": ("LEFT", "SEMI"),
             "anti": ("LEFT", "ANTI")}  # fmt: skip
_SET_OPERATIONS = {"union": exp.Union, "intersect": exp.Intersect, "except": exp.Except}


def stage_sql(stage: Stage, pretty: bool = True) -> str:
    renderer = _Renderer(stage.hints)
    return renderer.select(stage.tree).sql(dialect="spark", pretty=pretty)


class _Renderer(PlanVisitor):
    def __init__(self, hints: dict[int, str]) -> None:
        self.hints = hints
        self.aliases = 0

    def select(self, node: Node) -> exp.Select:
        """A SELECT giving exactly ``node``'s columns, in order."""
        return self.visit(node)

    def visit_Input(self, node: Input) -> exp.Select:
        return _projection_of(node.ids, exp.to_table(node.view))

    def visit_OneRow(self, node: OneRow) -> exp.Select:
        return exp.Select()

    def visit_Sort(self, node: Sort | Limit) -> exp.Select:
        return self._ordered(node)

    visit_Limit = visit_Sort

    def visit_Source(self, node: Source) -> exp.Select:
        scan = node.scan
        read = {}
        for column_id, name in scan.mapping:
            column = scan.table.column(name)
            value = exp.column(name, quoted=True)
            if column is not None and column.partition and column.type.name != "string":
                kind = exp.DataType.build(str(column.type), dialect="spark")
                value = exp.Cast(this=value, to=kind)
            read[column_id] = value
        select = exp.Select(expressions=[_as(read[i], i) for i in scan.ids])
        select.set("from_", exp.From(this=exp.to_table(node.view)))
        if scan.filters:
            select = select.where(*[substitute(f, read) for f in scan.filters], copy=False)
        return select

    def visit_Values(self, node: Values) -> exp.Select:
        alias = exp.TableAlias(
            this=exp.to_identifier("v"),
            columns=[exp.to_identifier(i, quoted=True) for i in node.ids],
        )
        values = exp.Values(
            expressions=[exp.Tuple(expressions=[v.copy() for v in row]) for row in node.rows],
            alias=alias,
        )
        return _projection_of(node.ids, values)

    def visit_Filter(self, node: Filter) -> exp.Select:
        child = self.select(node.child)
        if _simple(child):
            return child.where(substitute(node.condition, _definitions(child)), copy=False)
        return self._wrapped(child, node.child.ids).where(node.condition.copy(), copy=False)

    def visit_Project(self, node: Project) -> exp.Select:
        child = self.select(node.child)
        if _simple(child):
            definitions = _definitions(child)
            child.set("expressions", [_as(substitute(e, definitions), i) for i, e in node.exprs])
            return child
        if (
            _renames_only(node)
            and isinstance(child, exp.Select)
            and not any(child.args.get(k) for k in ("group", "having", "distinct"))
            and not _orders_by_window(child)
        ):
            definitions = _definitions(child)
            child.set("expressions", [_as(definitions[e.name].copy(), i) for i, e in node.exprs])
            if child.args.get("order"):  # its keys may name the aliases renamed away
                order = substitute(child.args["order"], definitions)
                for key in order.expressions:
                    key.set("this", _not_ordinal(key.this))
                child.set("order", order)
            return child
        select = self._wrapped(child, node.child.ids)
        select.set("expressions", [_as(e.copy(), i) for i, e in node.exprs])
        return select

    def visit_Expand(self, node: Expand) -> exp.Select:
        """The child's columns, then one row per set from ``inline`` over an array of
        structs: the set's keys (a typed NULL for each it lacks), its id and position."""
        child, definitions = self._folding_into(node.child)
        kinds = dict(node.columns)
        rows = []
        for index, present in enumerate(node.sets):
            fields = []
            for position, (key_id, key) in enumerate(node.keys):
                value = (
                    substitute(key, definitions) if position in present else _null(kinds[key_id])
                )
                fields.append((key_id, value))
            absent = sum(
                1 << (len(node.keys) - 1 - p) for p in range(len(node.keys)) if p not in present
            )
            fields.append(
                (
                    node.gid,
                    exp.Cast(this=exp.Literal.number(absent), to=exp.DataType.build("BIGINT")),
                )
            )
            if node.pos:
                fields.append((node.pos, exp.Literal.number(index)))
            rows.append(
                exp.Struct(
                    expressions=[
                        exp.PropertyEQ(this=exp.to_identifier(i, quoted=True), expression=v)
                        for i, v in fields
                    ]
                )
            )
        kept = [_as(definitions.get(i, col(i)).copy(), i) for i in node.child.ids]
        child.set("expressions", kept + [exp.Inline(this=exp.Array(expressions=rows))])
        return child

    def visit_Aggregate(self, node: Aggregate) -> exp.Select:
        child, definitions = self._folding_into(node.child)
        groups = [substitute(e, definitions) for _, e in node.groups]
        child.set(
            "expressions",
            [_as(g.copy(), i) for (i, _), g in zip(node.groups, groups)]
            + [_as(substitute(e, definitions), i) for i, e in node.aggs],
        )
        if groups:
            child.set("group", exp.Group(expressions=[_not_ordinal(g.copy()) for g in groups]))
        return child

    def visit_Window(self, node: Window) -> exp.Select:
        child, definitions = self._folding_into(node.child)
        kept = [_as(definitions.get(i, col(i)).copy(), i) for i in node.child.ids]
        child.set("expressions", kept + [_as(substitute(f, definitions), i) for i, f in node.funcs])
        return child

    def _ordered(self, node: Sort | Limit) -> exp.Select:
        child = self.select(node.child)
        if (
            any(child.args.get(k) for k in ("order", "limit", "offset"))
            or not isinstance(child, exp.Select)
            or child.args.get("distinct")
        ):
            child = self._wrapped(child, node.child.ids)
        if isinstance(node, Sort):
            child.set("order", exp.Order(expressions=[k.copy() for k in node.keys]))
        if node.limit is not None:
            child.set("limit", exp.Limit(expression=exp.Literal.number(node.limit)))
        if node.offset:
            child.set("offset", exp.Offset(expression=exp.Literal.number(node.offset)))
        return child

    def visit_Join(self, node: Join) -> exp.Select:
        left = self._relation(node.left)
        side = self.hints.get(id(node))
        if node.kind == "single":
            (value,) = node.right.ids
            scalar = exp.Subquery(this=self.select(node.right))
            select = exp.Select(expressions=[col(i) for i in node.left.ids] + [_as(scalar, value)])
            select.set("from_", exp.From(this=left))
            return select
        right = self._relation(node.right)
        join_side, kind = _JOIN_SQL[node.kind]
        join = exp.Join(
            this=right,
            side=join_side or None,
            kind=kind,
            on=node.condition.copy() if node.condition is not None else None,
        )
        if node.kind == "cross":
            join = exp.Join(this=right, kind="CROSS")
        select = exp.Select(expressions=[col(i) for i in node.ids])
        select.set("from_", exp.From(this=left))
        select.set("joins", [join])
        if side is not None:
            build = (right if side == "right" else left).alias_or_name
            name = "SHUFFLE_HASH" if node.kind == "full" else "BROADCAST"
            select.set(
                "hint",
                exp.Hint(
                    expressions=[exp.Anonymous(this=name, expressions=[exp.to_identifier(build)])]
                ),
            )
        return select

    def visit_SetOp(self, node: SetOp) -> exp.Select:
        parts = []
        for index, child in enumerate(node.inputs):
            select = self.select(child)
            if index == 0:
                select = _renamed(select, child.ids, node.ids)
            parts.append(select)
        operation = _SET_OPERATIONS[node.kind]
        combined = parts[0]
        for part in parts[1:]:
            combined = operation(this=combined, expression=part, distinct=node.distinct)
        return self._wrapped(combined, node.ids)

    def visit_SubqueryColumn(self, node: SubqueryColumn) -> exp.Select:
        """The child's row under ``OUTER``, and the subquery expression over it."""
        expression = self._reading(node.expression, node.inputs, node.placeholders, node.names)
        child = exp.Subquery(
            this=self.select(node.child), alias=exp.TableAlias(this=exp.to_identifier(OUTER))
        )
        select = _projection_of(node.child.ids, child)
        select.expressions.append(_as(expression, node.column_id))
        return select

    def _reading(self, tree: exp.Expression, inputs, placeholders, names) -> exp.Expression:
        """``tree`` with each placeholder table replaced by its input, under the names its
        text uses."""
        reads = {}
        for placeholder, child, columns in zip(placeholders, inputs, names):
            renamed = exp.Select(expressions=[_as(col(i), n) for i, n in zip(child.ids, columns)])
            renamed.set("from_", exp.From(this=self._relation(child)))
            reads[placeholder] = renamed

        def read(found: exp.Expression) -> exp.Expression:
            if isinstance(found, exp.Table) and found.name in reads:
                return exp.Subquery(
                    this=reads[found.name].copy(), alias=found.args.get("alias").copy()
                )
            return found

        return tree.copy().transform(read, copy=False)

    def visit_WholeQuery(self, node: WholeQuery) -> exp.Select:
        """The query's own text, each input read where it names it, under the names it
        uses; its columns renamed to the plan's ids by position."""
        query = self._reading(node.query, node.inputs, node.placeholders, node.names)
        self.aliases += 1
        alias = exp.TableAlias(
            this=exp.to_identifier(f"t{self.aliases}"),
            columns=[exp.to_identifier(i, quoted=True) for i in node.ids],
        )
        return _projection_of(node.ids, exp.Subquery(this=query, alias=alias))

    def _relation(self, node: Node) -> exp.Expression:
        """``node`` as something a FROM or JOIN reads, under an alias of its own."""
        self.aliases += 1
        alias = f"t{self.aliases}"
        if isinstance(node, Input):
            return exp.to_table(node.view, alias=alias)
        return exp.Subquery(
            this=self.select(node), alias=exp.TableAlias(this=exp.to_identifier(alias))
        )

    def _folding_into(self, node: Node) -> tuple[exp.Select, dict[str, exp.Expression]]:
        """``node``'s SELECT for the node above to fold its columns into, with the definitions
        of the columns it projects; a SELECT that only reads ``node``'s columns, wrapped
        around it, where it is not simple enough."""
        child = self.select(node)
        if _simple(child):
            return child, _definitions(child)
        return self._wrapped(child, node.ids), {}

    def _wrapped(self, query: exp.Expression, ids: list[str]) -> exp.Select:
        self.aliases += 1
        subquery = exp.Subquery(
            this=query, alias=exp.TableAlias(this=exp.to_identifier(f"t{self.aliases}"))
        )
        return _projection_of(ids, subquery)


def _projection_of(ids: list[str], source: exp.Expression) -> exp.Select:
    select = exp.Select(expressions=[col(i) for i in ids])
    select.set("from_", exp.From(this=source))
    return select


def _renamed(select: exp.Select, ids: list[str], names: list[str]) -> exp.Select:
    if ids == names:
        return select
    definitions = _definitions(select)
    renamed = [_as(definitions.get(i, col(i)).copy(), n) for i, n in zip(ids, names)]
    select.set("expressions", renamed)
    return select


def _as(expression: exp.Expression, column_id: str) -> exp.Expression:
    if isinstance(expression, exp.Column) and expression.name == column_id:
        return expression
    return exp.Alias(this=expression, alias=exp.to_identifier(column_id, quoted=True))


def _definitions(select: exp.Select) -> dict[str, exp.Expression]:
    """What each output column of a SELECT is, over its FROM."""
    found = {}
    for projection in select.expressions:
        if isinstance(projection, exp.Alias):
            found[projection.alias] = projection.this
        elif isinstance(projection, exp.Column):
            found[projection.name] = projection
    return found


def _orders_by_window(select: exp.Select) -> bool:
    """Whether an ORDER BY key names a window function's alias: folding a renaming onto it
    would put the function itself in the sort, which Spark refuses."""
    order = select.args.get("order")
    if order is None:
        return False
    windowed = {a for a, d in _definitions(select).items() if d.find(exp.Window)}
    return any(c.name in windowed for c in order.find_all(exp.Column))


def _renames_only(node: Project) -> bool:
    """A projection that only picks and renames its input's columns: it can go onto an
    ordered SELECT (ORDER BY still sees the input's names there)."""
    return all(isinstance(e, exp.Column) for _, e in node.exprs)


def _simple(select: exp.Expression) -> bool:
    """A SELECT that only projects and filters its FROM, so another projection or filter can
    be folded into it (not past a generator: its rows replace its input row's)."""
    if not isinstance(select, exp.Select):
        return False
    if any(select.args.get(k) for k in ("group", "having", "order", "limit", "offset", "distinct")):
        return False
    return not any(
        e.find(exp.Window, exp.AggFunc, exp.Subquery, exp.Select, *GENERATORS)
        or any(is_generator(f) for f in e.find_all(exp.Anonymous))
        for e in select.expressions
    )


def _not_ordinal(key: exp.Expression) -> exp.Expression:
    """A GROUP BY or ORDER BY key that Spark reads as itself: an integer literal there is a
    position in the SELECT list (``spark.sql.groupByOrdinal``), so a constant key the
    planner substituted (``SUM(DISTINCT 6)`` grouped by its argument) is cast to its type."""
    if isinstance(key, exp.Literal) and not key.is_string and key.is_int:
        kind = "INT" if -(1 << 31) <= int(key.name) < (1 << 31) else "BIGINT"
        return exp.Cast(this=key, to=exp.DataType.build(kind))
    return key


def _null(kind) -> exp.Expression:
    """A NULL of ``kind``, so every set's struct has the same field types."""
    if not kind.is_known:
        return exp.Null()
    return exp.Cast(this=exp.Null(), to=exp.DataType.build(str(kind), dialect="spark"))
