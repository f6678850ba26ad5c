"""A grouped aggregate joined on its group keys with a small, filtered input aggregates only
the groups that join can keep: that input's keys filter the aggregate's input first, as a semi
join where it is read.

TPC-H q20 sums a year of ``lineitem`` by part and supplier, then keeps the groups of the few
``partsupp`` rows whose part is named 'forest%'. Without the filter every group is summed and
exchanged (at scale 1, 900,000 groups for some 2,000 kept); with it, the ``partsupp`` side,
broadcast to the join anyway, is broadcast into the ``lineitem`` scan too and the aggregate sees
only the rows it keeps. The rewrite is exact: the filter reads only group keys, so it keeps or
drops whole groups, and it drops only groups that an inner or semi join on those equalities
drops (a NULL key matches nothing in either).

The filter is the join's input or, where that is too big, the input of its inner joins that
gives the keys (TPC-H q17: ``lineitem`` joined with a filtered ``part`` gives the part keys,
``part``'s alone are a superset of them). It is used only where it pays by the planner's
estimates and changes nothing else: it is small enough to broadcast, it reads a filtered table
(an unfiltered one keeps every group), it is smaller than what the aggregate reads, and nothing
between the join and the aggregate has another consumer (a view read twice gives both readers
the same rows). The filter becomes one stage with two consumers, not two reads.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from jobmanager.planner.joins import equi_keys, estimate_bytes
from jobmanager.planner.logical import (
    Aggregate, Filter, Join, Node, Project, Scan, SetOp, col, conjoin, nodes_of, paren,
    references, substitute,
)  # fmt: skip
from jobmanager.planner.pushdown import parent_counts

__all__ = ["filter_groups"]

_KINDS = ("inner", "semi")


def filter_groups(root: Node, threshold: int) -> Node:
    """``root`` with each aggregate that qualifies filtered by its join's other input;
    ``threshold``: the planner's broadcast threshold (-1: no broadcasts planned, no rewrite)."""
    if threshold < 0:
        return root
    return _GroupFilter(parent_counts(root), threshold).rebuild(root)


class _GroupFilter:
    def __init__(self, parents: dict[int, int], threshold: int) -> None:
        self.parents = parents
        self.threshold = threshold
        self.done: dict[int, Node] = {}
        self.sizes: dict[int, int] = {}

    def rebuild(self, node: Node) -> Node:
        if id(node) in self.done:
            return self.done[id(node)]
        if isinstance(node, Join):
            left, right = node.left, node.right
            if node.kind in _KINDS:
                filtered = self._filtered(node, left, right, True)
                if filtered is not None:
                    left = filtered
                else:
                    right = self._filtered(node, right, left, False) or right
            result = replace(node, left=self.rebuild(left), right=self.rebuild(right))
        elif isinstance(node, SetOp):
            result = replace(node, inputs=tuple(self.rebuild(c) for c in node.inputs))
        elif node.children:
            result = replace(node, child=self.rebuild(node.children[0]))
        else:
            result = node
        self.done[id(node)] = result
        return result

    def _filtered(self, join: Join, side: Node, other: Node, side_is_left: bool) -> Node | None:
        """``side`` with its aggregate's input semi-joined with ``other``, or None."""
        chain, aggregate, renamed = self._down_to_aggregate(side)
        if aggregate is None:
            return None
        keys, _ = equi_keys(join.condition, set(join.left.ids), set(join.right.ids))
        groups = dict(aggregate.groups)
        pairs = []
        for left, right in keys:
            mine, theirs = (left, right) if side_is_left else (right, left)
            group = renamed.get(mine.name) if isinstance(mine, exp.Column) else None
            if group in groups:
                pairs.append((groups[group], theirs))
        found = self._keys_source(other, [theirs for _, theirs in pairs], aggregate)
        if found is None:
            return None
        source, names = found
        mapping = {top: col(name) for top, name in names.items()}
        condition = conjoin(exp.EQ(this=paren(group.copy()),
                                   expression=paren(substitute(theirs, mapping)))
                            for group, theirs in pairs)  # fmt: skip
        child = aggregate.child
        semi = Join(child.columns, join.origin, child, source, "semi", condition)
        result: Node = replace(aggregate, child=semi)
        for node in reversed(chain):
            result = replace(node, child=result)
        return result

    def _down_to_aggregate(self, side: Node
                           ) -> tuple[list[Node], Aggregate | None, dict[str, str]]:  # fmt: skip
        """The projections and filters over ``side``'s grouped aggregate, the aggregate, and
        each of ``side``'s column ids that is a column passed down to it, by the id it has
        there; no aggregate where there is none or a node on the way has another consumer."""
        chain: list[Node] = []
        renamed = {column_id: column_id for column_id in side.ids}
        node = side
        while self.parents.get(id(node), 0) <= 1:
            if isinstance(node, Aggregate):
                return chain, (node if node.groups else None), renamed
            if isinstance(node, Project):
                passed = {i: e.name for i, e in node.exprs if isinstance(e, exp.Column)}
                renamed = {top: passed[i] for top, i in renamed.items() if i in passed}
            elif not isinstance(node, Filter):
                break
            chain.append(node)
            node = node.child
        return chain, None, renamed

    def _keys_source(self, other: Node, keys: list[exp.Expression], aggregate: Aggregate
                     ) -> tuple[Node, dict[str, str]] | None:  # fmt: skip
        """The first node down ``other`` that gives every column the keys read and pays as a
        filter, with each of those columns' ids there: ``other`` itself, or the input of its
        inner joins (the kept side of its semi joins) that gives the keys, whose values are a
        superset of ``other``'s (TPC-H q17: ``lineitem`` joined with the filtered ``part``
        gives the part keys, ``part`` alone pays)."""
        names = {i: i for key in keys for i in references(key)}
        node: Node | None = other
        while node is not None and names:
            if self._pays(aggregate, node):
                return node, names
            wanted = set(names.values())
            if isinstance(node, Filter):
                node = node.child
            elif isinstance(node, Project):
                passed = {i: e.name for i, e in node.exprs if isinstance(e, exp.Column)}
                if not wanted <= set(passed):
                    return None
                names = {top: passed[i] for top, i in names.items()}
                node = node.child
            elif isinstance(node, Join) and node.kind in ("inner", "cross", "semi"):
                sides = (node.left,) if node.kind == "semi" else (node.left, node.right)
                node = next((s for s in sides if wanted <= set(s.ids)), None)
            else:
                node = None
        return None

    def _pays(self, aggregate: Aggregate, source: Node) -> bool:
        size = estimate_bytes(source, self.sizes)
        filtered = any(isinstance(n, Scan) and n.filters for n in nodes_of(source))
        return filtered and size <= self.threshold and \
            size < estimate_bytes(aggregate.child, self.sizes)  # fmt: skip
