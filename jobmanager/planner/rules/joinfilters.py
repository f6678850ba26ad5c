"""What a join will drop is dropped where its input is read: a small filtered input of the
join, semi-joined on the join's keys into the reading of the other side, so fewer rows are
aggregated and fewer cross an exchange.

- A grouped aggregate joined on its group keys aggregates only the groups the join keeps.
  TPC-H q20 sums a year of ``lineitem`` by part and supplier, then keeps the groups of the few
  ``partsupp`` rows whose part is named 'forest%': without the filter every group is summed
  and exchanged (at scale 1, 900,000 groups for some 2,000 kept); with it, the ``partsupp``
  side, broadcast to the join anyway, is broadcast into the ``lineitem`` scan too. Exact: the
  filter reads only group keys, so it keeps or drops whole groups, and only groups an inner or
  semi join on those equalities drops (a NULL key matches nothing in either).
- A table broadcast to a join is filtered in its own scan by a smaller filtered input that the
  join meets it with (TPC-H q02: the outer ``partsupp``, broadcast whole, filtered by the
  parts of size 15; q10: the returned ``lineitem`` rows by the quarter's orders). Exact for an
  inner or semi join: a row whose key the filter lacks would meet no row of it.
- A table too big to broadcast, hashed to its join, is filtered in its scan by a small input on
  the other side whose own filters keep at most a tenth of its table's rows, so the table's
  rows are expected to shrink as much before they cross the exchange (TPC-H q10 at scale 10:
  the returned ``lineitem`` rows, 1.3 GiB, by the keys of a quarter's ``orders``, a 27th of
  them by the range of ``o_orderdate``). Exact for an inner join, as above. Spark's runtime
  filters (``InjectRuntimeFilter``) cut such a side with a filter's keys too.
- The table a semi or anti join looks up, however big, is filtered in its scan by the small
  filtered side that keeps its rows (TPC-H q04: a quarter's orders, broadcast into the
  ``lineitem`` scan, so only their late lines are written and looked up, not every late line;
  q22: the customers of seven country codes into the ``orders`` scan of its NOT EXISTS).
  Spark cannot broadcast the kept side of a semi join, so without the filter every looked-up
  row crosses an exchange. Exact for an anti join too: a looked-up row whose key no kept row
  has would meet none. Not for NOT IN, whose NULLs keep every row out: its condition is no
  equality, so it has no keys to filter by.

The filter is the join's other input or, where that is too big, the input of its inner joins
that gives the keys, whose values are a superset of the join's (TPC-H q17: ``lineitem``
joined with a filtered ``part`` gives the part keys, ``part``'s alone are a superset). It is
used only where it pays by the planner's estimates and changes nothing else: it is small enough
to broadcast, it reads a filtered table (an unfiltered one keeps every row), it is smaller than
what it filters, a filtered table is broadcast or the filter selective (a tiny table, read
whole by the join's tasks, stays so), and nothing between the join and what is filtered has
another consumer (a view read twice gives both readers the same rows). The filter becomes one
stage with two consumers, not two reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from sqlglot import exp

from jobmanager.planner.rules.joins import equi_keys, estimate_bytes, reads_filtered
from jobmanager.planner.logical import (
    Aggregate,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    col,
    conjoin,
    paren,
    references,
    substitute,
    with_children,
)
from jobmanager.planner.rules.pushdown import parent_counts
from jobmanager.planner.rewrite import rewrite_down
from jobmanager.planner.rules.selectivity import kept_share

__all__ = ["filter_by_join_keys"]

Pair = tuple[exp.Expression, exp.Expression]  # (a key on the filtered side, the filter's)

_KINDS = ("inner", "semi")
_SELECTIVE = 0.1  # the most of its table's rows a hashed scan's filter keeps (as a semi join)


def filter_by_join_keys(root: Node, threshold: int, read_whole: int = -1) -> Node:
    """``root`` with each aggregate and broadcast table that qualifies filtered by an input of
    its join; ``threshold``: the planner's broadcast threshold (-1: no broadcasts planned, no
    rewrite); ``read_whole``: the most listed bytes of a table its joins' tasks read whole."""
    if threshold < 0:
        return root
    return rewrite_down(
        root, _JoinKeyFilter(parent_counts(root), threshold, read_whole).filter_sides
    )


class _JoinKeyFilter:
    def __init__(self, parents: dict[int, int], threshold: int, read_whole: int) -> None:
        self.parents = parents
        self.threshold = threshold
        self.read_whole = read_whole
        self.sizes: dict[int, int] = {}

    def filter_sides(self, node: Node) -> Node:
        """``node`` with a side of its inner, semi or anti join filtered by the other where
        that pays (its left first), else ``node``."""
        if not isinstance(node, Join) or node.kind not in _KINDS + ("anti",):
            return node
        left, right = node.children
        filtered = self._filtered(node, left, right, True) if node.kind in _KINDS else None
        if filtered is not None:
            return with_children(node, (filtered, right))
        return with_children(node, (left, self._filtered(node, right, left, False) or right))

    def _filtered(self, join: Join, side: Node, other: Node, side_is_left: bool) -> Node | None:
        """``side`` with its aggregate's input, or the table it reads, semi-joined with a
        filter from ``other``; None where none pays."""
        chain, target, renamed = self._down_to_target(side)
        filtered = self._filtered_read(target, side_is_left)
        if filtered is None:
            return None
        keyed, read = filtered
        pairs = _key_pairs(join, keyed, renamed, side_is_left)
        names = {i: i for _, theirs in pairs for i in references(theirs)}
        found = self._keys_source(other, pairs, read, names)
        if found is None or read is target and not self._filterable(join, target, found[0]):
            return None
        return _semi_joined(join, chain, target, read, found)

    def _filtered_read(
        self, target: Node | None, side_is_left: bool
    ) -> tuple[dict[str, exp.Expression], Node] | None:
        """What a filter would be put over under ``target``: a grouped aggregate's input, or
        a table a join's right side reads, too big for its tasks to read whole; with the
        expression there of each of ``target``'s keys, by id."""
        if isinstance(target, Aggregate) and target.groups:
            return dict(target.groups), target.child
        if isinstance(target, Scan) and not side_is_left and self.read_whole < self._size(target):
            return {i: col(i) for i in target.ids}, target
        return None

    def _filterable(self, join: Join, scan: Scan, source: Node) -> bool:
        """Whether the scan a join looks up is worth filtering by ``source``: a semi or anti
        join's, however big; a broadcast one; or, hashed, where ``source`` keeps at most
        ``_SELECTIVE`` of its table's rows, so the scan's are expected to shrink as much."""
        return (
            join.kind in ("semi", "anti")
            or self._size(scan) <= self.threshold
            or kept_share(source) <= _SELECTIVE
        )

    def _down_to_target(self, side: Node) -> tuple[list[Node], Node | None, dict[str, str]]:
        """The projections and filters over ``side``'s aggregate or scan, that node, and each
        of ``side``'s column ids that is a column passed down to it, by the id it has there;
        no node where a node on the way has another consumer."""
        chain: list[Node] = []
        renamed = {column_id: column_id for column_id in side.ids}
        node = side
        while self.parents.get(id(node), 0) <= 1:
            if isinstance(node, (Aggregate, Scan)):
                return chain, node, renamed
            if isinstance(node, Project):
                passed = {i: e.name for i, e in node.exprs if isinstance(e, exp.Column)}
                renamed = {top: passed[i] for top, i in renamed.items() if i in passed}
            elif not isinstance(node, Filter):
                break
            chain.append(node)
            node = node.child
        return chain, None, renamed

    def _keys_source(
        self, node: Node, pairs: list[Pair], read: Node, names: dict[str, str]
    ) -> tuple[Node, list[Pair], dict[str, str]] | None:
        """The node down ``node`` that gives the columns of the most keys and pays as a
        filter, the smallest of those, with those keys and the ids their columns have there:
        ``node`` itself, or an input of its inner joins (the kept side of its semi joins) that
        gives keys, whose values are a superset of ``node``'s. The smallest is the cheapest to
        send and the first to finish (TPC-H q17: ``lineitem`` joined with the filtered
        ``part`` gives the part keys, ``part`` alone gives them from a 30 KiB scan)."""
        found = [
            source for source in self._sources(node, pairs, names) if self._pays(read, source[0])
        ]
        if not found:
            return None
        return min(found, key=lambda source: (-len(source[1]), self._size(source[0])))

    def _sources(
        self, node: Node, pairs: list[Pair], names: dict[str, str]
    ) -> Iterator[tuple[Node, list[Pair], dict[str, str]]]:
        """``node`` and the inputs below it that give the columns of some of the keys."""
        ids = set(node.ids)
        pairs = [p for p in pairs if {names[i] for i in references(p[1])} <= ids]
        if not pairs:
            return
        yield node, pairs, names
        for child, kept, child_names in _inputs_below(node, pairs, names):
            yield from self._sources(child, kept, child_names)

    def _pays(self, read: Node, source: Node) -> bool:
        size = self._size(source)
        return reads_filtered(source) and size <= self.threshold and size < self._size(read)

    def _size(self, node: Node) -> int:
        return estimate_bytes(node, self.sizes)


def _inputs_below(
    node: Node, pairs: list[Pair], names: dict[str, str]
) -> list[tuple[Node, list[Pair], dict[str, str]]]:
    """The inputs of ``node`` whose keys' values are a superset of ``node``'s (a filter's, a
    projection's, an inner join's either side, the kept side of a semi, anti or single
    join), each with the keys it still gives and the ids their columns have there."""
    if isinstance(node, Filter):
        return [(node.child, pairs, names)]
    if isinstance(node, Project):
        return [_through_project(node, pairs, names)]
    if isinstance(node, Join) and node.kind in ("inner", "cross", "semi", "anti", "single"):
        sides = (node.left, node.right) if node.kind in ("inner", "cross") else (node.left,)
        return [(side, pairs, names) for side in sides]
    return []


def _through_project(
    node: Project, pairs: list[Pair], names: dict[str, str]
) -> tuple[Node, list[Pair], dict[str, str]]:
    """``node``'s input, the keys whose columns it passes through, and their ids there."""
    passed = {i: e.name for i, e in node.exprs if isinstance(e, exp.Column)}
    names = {top: passed[i] for top, i in names.items() if i in passed}
    return node.child, [p for p in pairs if references(p[1]) <= set(names)], names


def _key_pairs(
    join: Join, keyed: dict[str, exp.Expression], renamed: dict[str, str], side_is_left: bool
) -> list[Pair]:
    """The join's equalities whose filtered side is a column passed down from ``keyed``: its
    expression there (``keyed``'s) with the other side's."""
    keys, _ = equi_keys(join.condition, set(join.left.ids), set(join.right.ids))
    pairs: list[Pair] = []
    for left, right in keys:
        mine, theirs = (left, right) if side_is_left else (right, left)
        key = renamed.get(mine.name) if isinstance(mine, exp.Column) else None
        if key in keyed:
            pairs.append((keyed[key], theirs))
    return pairs


def _semi_joined(
    join: Join,
    chain: list[Node],
    target: Node,
    read: Node,
    found: tuple[Node, list[Pair], dict[str, str]],
) -> Node:
    """``read`` semi-joined with the filter ``found`` on its keys, under ``target`` (where
    it is an aggregate) and the projections and filters of ``chain`` over it."""
    source, pairs, names = found
    mapping = {top: col(name) for top, name in names.items()}
    condition = conjoin(
        exp.EQ(this=paren(mine.copy()), expression=paren(substitute(theirs, mapping)))
        for mine, theirs in pairs
    )
    result: Node = Join(read.columns, join.origin, read, source, "semi", condition)
    if isinstance(target, Aggregate):
        result = replace(target, child=result)
    for node in reversed(chain):
        result = replace(node, child=result)
    return result
