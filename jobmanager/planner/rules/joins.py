"""Inner joins in an order that never multiplies rows without a key, and the bytes a plan is
expected to produce.

A tree of inner joins (and the cross joins that WHERE conditions turned into them) is flattened
into its inputs and its conditions, then joined again left-deep: starting from the input with
the most listed bytes (the one that should stream, never be sent whole), each step joins the
smallest input that an equality condition connects to what is joined so far; only when none is
connected (the query itself has no key between them) is the smallest input cross-joined. An
equality on columns that repeat on both sides (by their files' statistics) connects only when
nothing else does, or each row would meet thousands (TPC-H Q5's nation keys). An input too
large to broadcast is first joined with the small inputs only it connects to, so they filter
it where it is read, before it crosses an exchange. A semi or anti join whose condition reads
one input of such a tree is moved onto that input, as Spark pushes them, but over the small
inputs broadcast into its scan where one of them filters: TPC-H Q21's ``l1`` meets the one
nation's suppliers and the finished orders in its scan, and only those rows, a 25th, are
hashed for the two lineitem subqueries.

The estimates are the sources' listed bytes (the compressed column chunks of the columns read,
``jobmanager.planner.catalog``) times the share of rows a scan's filters keep
(``jobmanager.planner.rules.selectivity``: a range of a column from its files' min and max, else
guessed as Flink's planner guesses without statistics), carried up the plan: a join
gives the sum of its inputs, an inner join with a filtered side whose keys may be unique (as
many possible values, by the files' min and max, as half its table's rows) the other side's
cut to the share of rows that side keeps (each row meets at most one of its rows: TPC-H
q21's ``lineitem`` joined with the one nation and the finished orders, 1.8 MB, not 24 MB, so
it filters the two lineitem subqueries' scans before they are hashed), a semi join a tenth
of its left input where a filter drops rows of its other side (Calcite's guess for any semi
join; against an unfiltered input, such as TPC-H q21's EXISTS over all of ``lineitem``, it
keeps nearly every row), an anti join or any other semi join its left input, an aggregate
without groups a row, anything else its input. Without the guess a filtered dimension table
looked as big as the whole table: at scale 10 TPC-H q08's ``part`` (one ``p_type`` of 150)
listed 11.8 MiB, over the broadcast threshold, and the 1.3 GiB of ``lineitem`` it filters was
shuffled before the run time could see that ``part`` gave 111 KiB.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from sqlglot import exp

from jobmanager.planner.logical import (
    Aggregate,
    Filter,
    Join,
    Limit,
    Node,
    OneRow,
    Scan,
    SetOp,
    Values,
    WholeQuery,
    conjoin,
    conjuncts,
    nodes_of,
    references,
    with_children,
)
from jobmanager.planner.rules.pushdown import parent_counts
from jobmanager.planner.rules.selectivity import kept_share, read_scan, scan_selectivity

__all__ = [
    "equi_keys",
    "estimate_bytes",
    "reads_filtered",
    "reorder_joins",
    "repeats",
]

_ROW_BYTES = 64
_SEMI_JOIN_SELECTIVITY = 0.1  # Calcite's RelMdUtil.getSemiJoinRowCount, with RexUtil's guess


def estimate_bytes(
    node: Node, memo: dict[int, int] | None = None, leaf: Callable[[Node], int | None] | None = None
) -> int:
    """``leaf``: the size of a node it knows (a stage's input, read from another stage), so a
    stage's tree is estimated as the plan it was cut from."""
    memo = {} if memo is None else memo
    if id(node) in memo:
        return memo[id(node)]
    known = leaf(node) if leaf is not None else None
    if known is not None:
        size = known
    elif isinstance(node, Scan):
        size = int(node.table.listed_bytes([c for _, c in node.mapping]) * scan_selectivity(node))
    elif isinstance(node, (OneRow, Values)):
        size = _ROW_BYTES * max(1, len(getattr(node, "rows", ())))
    elif isinstance(node, Join):
        size = _join_bytes(node, memo, leaf)
    elif isinstance(node, (SetOp, WholeQuery)):
        size = sum(estimate_bytes(c, memo, leaf) for c in node.children)
    elif isinstance(node, Aggregate) and not node.groups:
        size = _ROW_BYTES
    elif isinstance(node, Limit) and node.limit is not None:
        size = min(estimate_bytes(node.child, memo, leaf), _ROW_BYTES * max(1, node.limit))
    else:
        size = estimate_bytes(node.children[0], memo, leaf)
    memo[id(node)] = size
    return size


def _join_bytes(node: Join, memo: dict[int, int], leaf) -> int:
    if node.kind == "semi" and drops_rows(node.right):
        return int(estimate_bytes(node.left, memo, leaf) * _SEMI_JOIN_SELECTIVITY)
    if node.kind in ("semi", "anti", "single"):
        return estimate_bytes(node.left, memo, leaf)
    if node.kind == "inner":
        return _inner_join_bytes(node, memo, leaf)
    return sum(estimate_bytes(c, memo, leaf) for c in node.children)


def _inner_join_bytes(node: Join, memo: dict[int, int], leaf) -> int:
    """An inner join's inputs' bytes, the other side's cut to the share of its table's rows
    a filtered side keeps where that side's keys may each be unique: each row meets at most
    one of its rows, so only the rows whose keys it kept are left."""
    left, right = (estimate_bytes(c, memo, leaf) for c in node.children)
    keys, _ = equi_keys(node.condition, set(node.left.ids), set(node.right.ids))
    if not keys:
        return left + right
    shares = [
        kept_share(side) if all(may_be_unique(side, key) for key in side_keys) else 1.0
        for side, side_keys in (
            (node.left, [a for a, _ in keys]),
            (node.right, [b for _, b in keys]),
        )
    ]
    if shares[0] <= shares[1]:
        return int(right * shares[0]) + left
    return int(left * shares[1]) + right


Pairs = list[tuple[exp.Expression, exp.Expression]]


def equi_keys(
    condition: exp.Expression | None, left_ids: set[str], right_ids: set[str]
) -> tuple[Pairs, list[exp.Expression]]:
    """The condition's equalities between an expression of each side, as (left, right), and
    the conjuncts that are not such equalities."""
    keys, rest = [], []
    for conjunct in conjuncts(condition):
        if isinstance(conjunct, exp.EQ):
            a, b = conjunct.this, conjunct.expression
            ra, rb = references(a), references(b)
            if ra and rb and ra <= left_ids and rb <= right_ids:
                keys.append((a, b))
                continue
            if ra and rb and ra <= right_ids and rb <= left_ids:
                keys.append((b, a))
                continue
        rest.append(conjunct)
    return keys, rest


def reorder_joins(root: Node, threshold: int = -1) -> Node:
    """``threshold``: the broadcast threshold; inputs at most this large are joined first to
    the one large input they connect to."""
    return _Reorderer(parent_counts(root), threshold).rebuild(root)


class _Reorderer:
    def __init__(self, parents: dict[int, int], threshold: int) -> None:
        self.parents = parents
        self.threshold = threshold
        self.done: dict[int, Node] = {}
        self.sizes: dict[int, int] = {}

    def rebuild(self, node: Node) -> Node:
        if id(node) in self.done:
            return self.done[id(node)]
        if isinstance(node, Join) and node.kind in ("inner", "cross"):
            left, left_conditions = self._flatten(node.left)
            right, right_conditions = self._flatten(node.right)
            conditions = left_conditions + right_conditions + conjuncts(node.condition)
            result = self._ordered([self.rebuild(leaf) for leaf in left + right], conditions)
        elif isinstance(node, Join) and node.kind in ("semi", "anti"):
            result = self._semi_or_anti(node)
        else:
            result = with_children(node, [self.rebuild(c) for c in node.children])
        self.done[id(node)] = result
        return result

    def _flatten(self, node: Node) -> tuple[list[Node], list[exp.Expression]]:
        if (
            isinstance(node, Join)
            and node.kind in ("inner", "cross")
            and self.parents.get(id(node), 0) <= 1
        ):
            left, left_conditions = self._flatten(node.left)
            right, right_conditions = self._flatten(node.right)
            return left + right, left_conditions + right_conditions + conjuncts(node.condition)
        return [node], []

    def _semi_or_anti(self, node: Join) -> Node:
        left, right = self.rebuild(node.left), self.rebuild(node.right)
        if not (isinstance(left, Join) and left.kind in ("inner", "cross")):
            return replace(node, left=left, right=right)
        leaves, conditions = self._flatten(left)
        outer = references(node.condition) - set(right.ids) if node.condition is not None else set()
        for leaf in leaves:
            if outer and outer <= set(leaf.ids):

                def semi(kept: Node) -> Node:
                    return Join(kept.columns, node.origin, kept, right, node.kind, node.condition)

                return self._ordered(leaves, conditions, {id(leaf): semi})
        return replace(node, left=left, right=right)

    def _size(self, node: Node) -> int:
        return estimate_bytes(node, self.sizes)

    def _ordered(
        self,
        leaves: list[Node],
        conditions: list[exp.Expression],
        semis: dict[int, Callable[[Node], Node]] | None = None,
    ) -> Node:
        """``semis``: by a leaf's identity, the semi or anti join that filters it."""
        semis = semis or {}
        remaining = list(leaves)
        first = max(remaining, key=lambda leaf: (self._size(leaf), -remaining.index(leaf)))
        remaining.remove(first)
        current, unused = first, list(conditions)
        spine: list[Join] = []
        while remaining:
            pick = self._next(current, remaining, unused)
            remaining.remove(pick)
            if not self._small(pick):
                own, unused = self._with_own_small_sides(pick, current, remaining, unused)
                pick = self._semi_placed(pick, own, semis.get(id(pick)))
            elif id(pick) in semis:
                pick = semis[id(pick)](pick)
            current, unused = self._joined(current, pick, unused)
            spine.append(current)
        return self._semi_placed(first, spine, semis.get(id(first)))

    def _semi_placed(
        self, leaf: Node, spine: list[Join], semi: Callable[[Node], Node] | None
    ) -> Node:
        """The joins of ``spine``, left-deep over ``leaf``, with ``semi`` (a semi or anti
        join reading ``leaf``'s columns) over ``leaf`` joined with the small inputs joined to
        it first (the broadcasts into its scan) where one of them is filtered, else over
        ``leaf`` itself: TPC-H Q21's ``l1`` meets the one nation's suppliers in its scan,
        then is hashed for its subqueries."""
        if semi is None:
            return spine[-1] if spine else leaf
        prefix = 0
        while prefix < len(spine) and self._small(spine[prefix].right):
            prefix += 1
        if not any(reads_filtered(join.right) for join in spine[:prefix]):
            prefix = 0
        node = semi(spine[prefix - 1] if prefix else leaf)
        for join in spine[prefix:]:
            node = replace(join, left=node)
        return node

    def _next(self, current: Node, remaining: list[Node], unused: list[exp.Expression]) -> Node:
        """The smallest input an equality connects to ``current`` without repeating keys on
        both sides, else the smallest connected one, else the smallest (``_smallest``)."""
        connected = [leaf for leaf in remaining if _connects(current, leaf, unused)]
        safe = [leaf for leaf in connected if not _many_to_many(current, leaf, unused)]
        return self._smallest(safe or connected or remaining, current, remaining, unused)

    def _smallest(
        self,
        candidates: list[Node],
        current: Node,
        remaining: list[Node],
        unused: list[exp.Expression],
    ) -> Node:
        """The smallest of ``candidates``, a small one that filters first: filtered, or the
        one way to a small filtered input; it drops rows the others would each look up (TPC-H
        q08: ``lineitem`` meets the one type's parts before every supplier and its nation;
        q21: the suppliers lead to the one nation, so they come before the finished orders)."""

        def filters(leaf: Node) -> bool:
            return reads_filtered(leaf) or any(
                other is not leaf
                and self._small(other)
                and reads_filtered(other)
                and _connects(leaf, other, unused)
                and not _connects(current, other, unused)
                for other in remaining
            )

        filtering = [leaf for leaf in candidates if self._small(leaf) and filters(leaf)]
        return min(
            filtering or candidates, key=lambda leaf: (self._size(leaf), remaining.index(leaf))
        )

    def _with_own_small_sides(
        self, big: Node, current: Node, remaining: list[Node], unused: list[exp.Expression]
    ) -> tuple[list[Join], list[exp.Expression]]:
        """``big`` joined first with the small inputs only it connects to (not what is joined
        so far), each join in turn: they filter it where it is read, before it crosses an
        exchange (TPC-H Q3: the segment's customers into the orders scan, then orders meet
        lineitem)."""
        spine: list[Join] = []
        while True:
            own = [
                leaf
                for leaf in remaining
                if self._small(leaf)
                and _connects(big, leaf, unused)
                and not _connects(current, leaf, unused)
                and not _many_to_many(big, leaf, unused)
            ]
            if not own:
                return spine, unused
            leaf = self._smallest(own, big, remaining, unused)
            remaining.remove(leaf)
            big, unused = self._joined(big, leaf, unused)
            spine.append(big)

    def _small(self, node: Node) -> bool:
        return 0 <= self.threshold and self._size(node) <= self.threshold

    def _joined(
        self, left: Node, right: Node, unused: list[exp.Expression]
    ) -> tuple[Join, list[exp.Expression]]:
        """``left`` joined with ``right`` on every unused condition they now both cover."""
        available = set(left.ids) | set(right.ids)
        applicable = [c for c in unused if references(c) <= available]
        rest = [c for c in unused if not references(c) <= available]
        condition = conjoin(applicable)
        joined = Join(
            left.columns + right.columns,
            _origin(left, right, condition),
            left,
            right,
            "inner" if condition is not None else "cross",
            condition,
        )
        return joined, rest


def drops_rows(node: Node) -> bool:
    """Whether a filter under ``node`` (a scan's, or one over an aggregate: a HAVING) keeps
    only some of its rows."""
    return reads_filtered(node) or any(isinstance(n, Filter) for n in nodes_of(node))


def reads_filtered(node: Node) -> bool:
    """Whether a scan under ``node`` has filters: without one, a join with it drops no rows."""
    return any(isinstance(n, Scan) and n.filters for n in nodes_of(node))


def _connects(joined: Node, leaf: Node, conditions: list[exp.Expression]) -> bool:
    return bool(equi_keys(conjoin(conditions), set(joined.ids), set(leaf.ids))[0])


def _many_to_many(joined: Node, leaf: Node, conditions: list[exp.Expression]) -> bool:
    """Whether every equality connecting the two compares columns that the files' statistics
    show repeat on both sides (TPC-H Q5's ``c_nationkey = s_nationkey``: 25 values for 150,000
    customers and 10,000 suppliers): joined alone on them, each row would meet thousands."""
    keys, _ = equi_keys(conjoin(conditions), set(joined.ids), set(leaf.ids))
    return bool(keys) and all(repeats(joined, a) and repeats(leaf, b) for a, b in keys)


def may_be_unique(node: Node, key: exp.Expression) -> bool:
    """Whether ``key``, a column read from a table by a scan under ``node``, has at least as
    many possible values (by its files' min and max) as half that table's rows."""
    found = _values_and_rows(node, key)
    return found is not None and found[0] * 2 >= found[1]


def repeats(node: Node, key: exp.Expression) -> bool:
    """Whether ``key``, a column read from a table by a scan under ``node``, has fewer possible
    values (by its files' min and max) than half that table's rows."""
    found = _values_and_rows(node, key)
    return found is not None and found[0] * 2 < found[1]


def _values_and_rows(node: Node, key: exp.Expression) -> tuple[int, int] | None:
    """How many values ``key``'s column may take (by its files' min and max) and its table's
    rows, where the first scan under ``node`` reading it knows both."""
    if not isinstance(key, exp.Column):
        return None
    for scan in filter(None, map(read_scan, nodes_of(node))):
        name = dict(scan.mapping).get(key.name)
        if name is None:
            continue
        column, rows = scan.table.column(name), scan.table.rows
        if column and column.value_range and rows:
            return column.value_range, rows
        return None
    return None


def _origin(left: Node, right: Node, condition: exp.Expression | None) -> str:
    on = f" ON {condition.sql(dialect='spark')}" if condition is not None else ""
    return f"JOIN{on}"
