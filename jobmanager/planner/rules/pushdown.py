"""Filters move down the plan, as far as they keep their meaning.

A conjunct goes below a projection (its columns replaced by their expressions), below an
aggregate when it reads only grouping columns, into each input of a set operation, and into a
join: onto the side it reads when that side's rows survive the join as they are (the left of a
left join, either side of an inner one), into the join's condition when it reads both sides of
an inner join, and otherwise it stays above. A scan takes the conjuncts that reach it: they run
in the vertex that reads the files, and those on hive partition columns prune files
(``jobmanager.planner.physical.cut``). A WHERE conjunct that rejects the NULLs an outer join adds
(``ps_supplycost = min_cost``) makes that outer join an inner one, which joins may then be
ordered around. A node read by two parents (a CTE used twice) takes no filter from either.

From an OR whose every branch has conjuncts on one input of a join, that input gets the OR of
those conjuncts as well (TPC-H Q7, Q19), and conjuncts common to every branch are factored out:
``(a AND x) OR (a AND y)`` is ``a AND (x OR y)``, so a join key hidden in each branch is found.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from jobmanager.planner.logical import (
    Aggregate,
    Expand,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Scan,
    SetOp,
    Sort,
    SubqueryColumn,
    WholeQuery,
    Window,
    col,
    conjoin,
    conjuncts,
    nodes_of,
    references,
    substitute,
)

__all__ = ["parent_counts", "push_filters"]

_NULL_TOLERANT = (
    exp.Coalesce,
    exp.Case,
    exp.If,
    exp.Nullif,
    exp.Is,
    exp.Or,
    exp.Not,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
)
_REJECTING = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Like,
    exp.ILike,
    exp.In,
    exp.Between,
)


def parent_counts(root: Node) -> dict[int, int]:
    counts: dict[int, int] = {}
    for node in nodes_of(root):
        for child in node.children:
            counts[id(child)] = counts.get(id(child), 0) + 1
    return counts


def push_filters(root: Node) -> Node:
    return _Pusher(parent_counts(root)).push(root, [])


class _Pusher:
    def __init__(self, parents: dict[int, int]) -> None:
        self.parents = parents
        self.shared: dict[int, Node] = {}

    def push(self, node: Node, predicates: list[exp.Expression]) -> Node:
        """A plan equal to ``node`` filtered by ``predicates``."""
        if self.parents.get(id(node), 0) > 1:
            if id(node) not in self.shared:
                self.shared[id(node)] = self._rebuild(node, [])
            return _on_top(self.shared[id(node)], predicates)
        return self._rebuild(node, predicates)

    def _rebuild(self, node: Node, predicates: list[exp.Expression]) -> Node:
        predicates = [p for part in predicates for p in _factored(part)]
        rebuild = _REBUILDS.get(type(node))
        return rebuild(self, node, predicates) if rebuild else _on_top(node, predicates)

    def _filter(self, node: Filter, predicates: list[exp.Expression]) -> Node:
        return self.push(node.child, predicates + conjuncts(node.condition))

    def _scan(self, node: Scan, predicates: list[exp.Expression]) -> Node:
        return replace(node, filters=node.filters + tuple(predicates))

    def _window(self, node: Window, predicates: list[exp.Expression]) -> Node:
        below = [p for p in predicates if references(p) <= set(node.partition)]
        above = [p for p in predicates if not references(p) <= set(node.partition)]
        return _on_top(replace(node, child=self.push(node.child, below)), above)

    def _set_op(self, node: SetOp, predicates: list[exp.Expression]) -> Node:
        inputs = []
        for child in node.inputs:
            mapping = {i: col(c) for i, c in zip(node.ids, child.ids)}
            inputs.append(self.push(child, [substitute(p, mapping) for p in predicates]))
        return replace(node, inputs=tuple(inputs))

    def _sorted(self, node: Sort | Limit, predicates: list[exp.Expression]) -> Node:
        """A filter passes a plain sort; it stays above a sort with a limit or an offset, or
        a limit, which would keep other rows once filtered."""
        if isinstance(node, Sort) and node.limit is None and not node.offset:
            return replace(node, child=self.push(node.child, predicates))
        return _on_top(replace(node, child=self.push(node.child, [])), predicates)

    def _project(self, node: Project, predicates: list[exp.Expression]) -> Node:
        definitions = dict(node.exprs)
        below, above = [], []
        for predicate in predicates:
            used = [definitions[r] for r in references(predicate)]
            if all(_movable(e) for e in used):
                below.append(substitute(predicate, definitions))
            else:
                above.append(predicate)
        return _on_top(replace(node, child=self.push(node.child, below)), above)

    def _aggregate(self, node: Aggregate, predicates: list[exp.Expression]) -> Node:
        groups = dict(node.groups)
        below, above = [], []
        for predicate in predicates:
            used = references(predicate)
            grouped = used and used <= set(groups) and all(_movable(groups[u]) for u in used)
            if node.groups and grouped:
                below.append(substitute(predicate, groups))
            else:
                above.append(predicate)
        return _on_top(replace(node, child=self.push(node.child, below)), above)

    def _whole(self, node: WholeQuery, predicates: list[exp.Expression]) -> Node:
        """Nothing goes into a query Spark runs whole; its inputs are planned as any."""
        return _on_top(
            replace(node, inputs=tuple(self.push(c, []) for c in node.inputs)), predicates
        )

    def _expand(self, node: Expand, predicates: list[exp.Expression]) -> Node:
        """A filter stays above the sets' rows (it may read a nulled key); the child is
        planned as any."""
        return _on_top(replace(node, child=self.push(node.child, [])), predicates)

    def _subquery_column(self, node: SubqueryColumn, predicates: list[exp.Expression]) -> Node:
        """What does not read the subquery's value filters the rows before it is evaluated."""
        below = [p for p in predicates if node.column_id not in references(p)]
        above = [p for p in predicates if node.column_id in references(p)]
        inputs = tuple(self.push(i, []) for i in node.inputs)
        return _on_top(replace(node, child=self.push(node.child, below), inputs=inputs), above)

    def _join(self, node: Join, predicates: list[exp.Expression]) -> Node:
        left_ids, right_ids = set(node.left.ids), set(node.right.ids)
        kind = _strengthened(node.kind, predicates, left_ids, right_ids)
        where_left, where_right, above, where_stay = _routed_where(
            kind, predicates, left_ids, right_ids
        )
        on = [p for part in conjuncts(node.condition) for p in _factored(part)]
        on_left, on_right, on_stay = _routed_on(kind, on, left_ids, right_ids)
        stay = where_stay + on_stay
        implied_left, implied_right = _implied_filters(kind, stay, left_ids, right_ids)
        if kind == "cross" and stay:
            kind = "inner"
        joined = replace(
            node,
            left=self.push(node.left, where_left + on_left + implied_left),
            right=self.push(node.right, where_right + on_right + implied_right),
            kind=kind,
            condition=conjoin(stay),
        )
        return _on_top(joined, above)


_REBUILDS = {
    Filter: _Pusher._filter,
    Scan: _Pusher._scan,
    Project: _Pusher._project,
    Join: _Pusher._join,
    Aggregate: _Pusher._aggregate,
    Window: _Pusher._window,
    SetOp: _Pusher._set_op,
    Sort: _Pusher._sorted,
    Limit: _Pusher._sorted,
    WholeQuery: _Pusher._whole,
    Expand: _Pusher._expand,
    SubqueryColumn: _Pusher._subquery_column,
}

# the join kinds whose rows of a side survive as they are, so a filter of that side may go below
_WHERE_TO_LEFT = ("inner", "cross", "left", "semi", "anti", "single")
_WHERE_TO_RIGHT = ("inner", "cross", "right")
# the join kinds where a condition of the ON clause on one side may filter that side first
_ON_TO_LEFT = ("inner", "cross", "right")
_ON_TO_RIGHT = ("inner", "cross", "left", "semi", "anti")


def _strengthened(
    kind: str, predicates: list[exp.Expression], left_ids: set[str], right_ids: set[str]
) -> str:
    """An outer join whose WHERE rejects the NULLs it adds on a side is not outer there."""
    if kind in ("left", "full") and any(_rejects_nulls(p, right_ids) for p in predicates):
        kind = "inner" if kind == "left" else "right"
    if kind in ("right", "full") and any(_rejects_nulls(p, left_ids) for p in predicates):
        kind = "inner" if kind == "right" else "left"
    return kind


def _sorted_to_sides(
    predicates: list[exp.Expression], kind: str, *sides: tuple[set[str], tuple[str, ...], list]
) -> list:
    """Each predicate appended to the list of the first side ``(ids, kinds, into)`` that may
    take it (it reads only columns in ``ids``, and the join's ``kind`` is in ``kinds``); the
    predicates no side takes are returned, in order. A predicate reading no column fits every
    side, so the order of ``sides`` decides where it goes."""
    rest = []
    for predicate in predicates:
        used = references(predicate)
        for ids, kinds, into in sides:
            if used <= ids and kind in kinds:
                into.append(predicate)
                break
        else:
            rest.append(predicate)
    return rest


def _routed_where(
    kind: str, predicates: list[exp.Expression], left_ids: set[str], right_ids: set[str]
) -> tuple[list, list, list, list]:
    """The WHERE conjuncts above a join: (to its left, to its right, above it, into its
    condition)."""
    to_left, to_right = [], []
    rest = _sorted_to_sides(
        predicates,
        kind,
        (left_ids, _WHERE_TO_LEFT, to_left),
        (right_ids, _WHERE_TO_RIGHT, to_right),
    )
    if kind in ("inner", "cross"):
        return to_left, to_right, [], rest
    return to_left, to_right, rest, []


def _routed_on(
    kind: str, on: list[exp.Expression], left_ids: set[str], right_ids: set[str]
) -> tuple[list, list, list]:
    """The ON conjuncts: (to the left, to the right, kept in the condition)."""
    to_left, to_right = [], []
    stay = _sorted_to_sides(
        on, kind, (right_ids, _ON_TO_RIGHT, to_right), (left_ids, _ON_TO_LEFT, to_left)
    )
    return to_left, to_right, stay


def _implied_filters(
    kind: str, stay: list[exp.Expression], left_ids: set[str], right_ids: set[str]
) -> tuple[list, list]:
    """What the join's condition implies of each side; an implied filter drops no row the
    join would keep."""
    to_left, to_right = [], []
    for predicate in stay:
        if kind in _ON_TO_LEFT:
            to_left += _implied(predicate, left_ids)
        if kind in _ON_TO_RIGHT:
            to_right += _implied(predicate, right_ids)
    return to_left, to_right


def _on_top(node: Node, predicates: list[exp.Expression]) -> Node:
    if not predicates:
        return node
    condition = conjoin(predicates)
    return Filter(node.columns, "WHERE " + condition.sql(dialect="spark"), node, condition)


def _movable(expression: exp.Expression) -> bool:
    """Whether a filter may read ``expression`` below the node that computes it: not an
    aggregate, a window function or anything that changes from call to call."""
    return not any(isinstance(n, (exp.AggFunc, exp.Window, exp.Rand)) for n in expression.walk())


def _rejects_nulls(predicate: exp.Expression, ids: set[str]) -> bool:
    """True when the predicate is never true on a row whose ``ids`` columns are all NULL."""
    if isinstance(predicate, exp.And):
        return _rejects_nulls(predicate.left, ids) or _rejects_nulls(predicate.right, ids)
    if isinstance(predicate, exp.Or):
        return _rejects_nulls(predicate.left, ids) and _rejects_nulls(predicate.right, ids)
    if isinstance(predicate, exp.Paren):
        return _rejects_nulls(predicate.this, ids)
    if isinstance(predicate, exp.Not) and isinstance(predicate.this, exp.Is):
        return isinstance(predicate.this.this, exp.Column) and predicate.this.this.name in ids
    if not isinstance(predicate, _REJECTING):
        return False
    operands = list(predicate.iter_expressions())
    return any(
        references(o) & ids and not any(isinstance(n, _NULL_TOLERANT) for n in o.walk())
        for o in operands
    )


def _factored(predicate: exp.Expression) -> list[exp.Expression]:
    """``(a AND x) OR (a AND y)`` as ``[a, x OR y]``; anything else as it is."""
    inner = predicate.this if isinstance(predicate, exp.Paren) else predicate
    if not isinstance(inner, exp.Or):
        return [predicate]
    branches = [conjuncts(b) for b in _disjuncts(inner)]
    common = [c for c in branches[0] if all(any(c == o for o in other) for other in branches[1:])]
    if not common:
        return [predicate]
    rests = [[c for c in branch if not any(c == k for k in common)] for branch in branches]
    if any(not rest for rest in rests):
        return common  # a branch that is only the common part makes the OR always true
    rest = exp.or_(*[exp.Paren(this=conjoin(r)) for r in rests], copy=True)
    return common + [exp.Paren(this=rest)]


def _implied(predicate: exp.Expression, ids: set[str]) -> list[exp.Expression]:
    """From an OR whose every branch has conjuncts reading only ``ids``: their OR, which every
    row the predicate keeps satisfies."""
    inner = predicate.this if isinstance(predicate, exp.Paren) else predicate
    if not isinstance(inner, exp.Or):
        return []
    parts = []
    for branch in _disjuncts(inner):
        mine = [c for c in conjuncts(branch) if references(c) and references(c) <= ids]
        if not mine:
            return []
        parts.append(exp.Paren(this=conjoin(mine)))
    return [exp.Paren(this=exp.or_(*parts, copy=True))]


def _disjuncts(expression: exp.Expression) -> list[exp.Expression]:
    if isinstance(expression, exp.Paren):
        return _disjuncts(expression.this)
    if isinstance(expression, exp.Or):
        return _disjuncts(expression.left) + _disjuncts(expression.right)
    return [expression]
