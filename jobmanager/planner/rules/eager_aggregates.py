"""Counting a join's looked-up side before the join (eager aggregation, as Calcite's
AggregateJoinTransposeRule in Flink's planner): where a grouped aggregate over a join only
counts, or takes the least or greatest of, columns of the side whose key repeats, that side
is aggregated by its key first, and the join meets one row per key instead of every row.

TPC-H q13 counts each customer's orders over ``customer LEFT JOIN orders``: 1.5 M orders rows
were written, exchanged and joined to be counted per customer; aggregated by ``o_custkey``
first, about 100,000 rows are, and they are few enough to be broadcast to the join.

    Aggregate(G; COUNT(r), MIN(r'), MAX(r'')) over Join(L, R, inner or left, l = k)
  = Aggregate(G; COALESCE(SUM(n), 0), MIN(lo), MAX(hi))
      over Join(L, Aggregate(R by k; n = COUNT(r), lo = MIN(r'), hi = MAX(r'')), l = k)

Exact: each row of L meets at most one row of the aggregated R, which stands for every R row
of its key; summing counts (and taking extremes) over a group's L rows gives what the group
met, whatever the L rows' keys, duplicates included. An L row a left join keeps unmatched has
NULLs there, which SUM and MIN skip, and a group that met nothing counts 0, as COUNT does.
``G`` reads only L's columns, the condition is the one equality, and only COUNT, MIN and MAX
of R's columns are taken (SUM would widen a decimal twice, AVG needs its count, COUNT(*)
counts the unmatched L rows too).

Only where it pays by the catalog's statistics, as Calcite's rule is costed: R is a table
scan whose key column's values span at most half its rows (the Parquet footers' min and
max), so the aggregate at least halves it; a join on a unique key is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from jobmanager.planner.rules.joins import equi_keys
from jobmanager.planner.logical import (
    Aggregate,
    IdAllocator,
    Join,
    Node,
    Project,
    Scan,
    col,
    references,
    substitute,
)
from jobmanager.planner.rules.pushdown import parent_counts
from jobmanager.planner.rewrite import rewrite_up
from jobmanager.planner.types import BIGINT, SqlType

__all__ = ["aggregate_before_joins"]

_KINDS = ("inner", "left")
_TAKEN = (exp.Count, exp.Min, exp.Max)
_MIN_ROWS_PER_KEY = 2


def aggregate_before_joins(root: Node, ids: IdAllocator) -> Node:
    """``root`` with each grouped aggregate that qualifies computed over its join's other side
    aggregated first."""
    parents = parent_counts(root)

    def eager(node: Node) -> Node:
        return (_eager(node, parents, ids) or node) if isinstance(node, Aggregate) else node

    return rewrite_up(root, eager)


@dataclass(frozen=True, slots=True)
class _Split:
    """Where the rule applies to an aggregate: its ``join``, its ``groups`` over the join's
    columns, the ``counted`` side (at ``position`` in the join) and its join ``key``, the side
    ``kept`` as it is, and each aggregate call as (COUNT, MIN or MAX, the column it takes)."""

    join: Join
    groups: tuple[tuple[str, exp.Expression], ...]
    counted: Node
    kept: Node
    position: int
    key: str
    taken: tuple[tuple[type, str] | None, ...]

    def applies(self) -> bool:
        """Whether the groups read only the kept side, every call can be split, and the
        counted side's key repeats enough to pay."""
        return (
            all(references(e) <= set(self.kept.ids) for _, e in self.groups)
            and all(t is not None for t in self.taken)
            and _keys_repeat(self.counted, self.key)
        )


def _eager(top: Aggregate, parents: dict[int, int], ids: IdAllocator) -> Node | None:
    """``top`` over its join with the side it counts aggregated by its key first (a left
    join's right side, either side of an inner join); None where the rule does not apply or
    does not pay."""
    split = _split(top, parents)
    return _aggregated_first(top, split, ids) if split is not None else None


def _join_under(top: Aggregate, parents: dict[int, int]) -> tuple[Join, dict[str, str]] | None:
    """The inner or left join ``top`` aggregates, through a projection of its columns, and
    the join's id of each of ``top``'s input columns; None where there is none, or where the
    join or the projection has another consumer."""
    join, renamed = top.child, {i: i for i in top.child.ids}
    if isinstance(join, Project) and parents.get(id(join), 0) <= 1:
        if not all(isinstance(e, exp.Column) for _, e in join.exprs):
            return None
        renamed = {i: e.name for i, e in join.exprs}
        join = join.child
    if not isinstance(join, Join) or join.kind not in _KINDS or parents.get(id(join), 0) > 1:
        return None
    return join, renamed


def _one_key(join: Join) -> tuple[exp.Expression, exp.Expression] | None:
    """The join's condition as its one equality of a column of each side, (left, right);
    None where the condition is anything else."""
    keys, rest = equi_keys(join.condition, set(join.left.ids), set(join.right.ids))
    if rest or len(keys) != 1 or not all(isinstance(k, exp.Column) for k in keys[0]):
        return None
    return keys[0]


def _split(top: Aggregate, parents: dict[int, int]) -> _Split | None:
    """Where the rule applies to ``top``: the first side of its join, of those it may count,
    that qualifies; None where none does."""
    found = _join_under(top, parents)
    if found is None:
        return None
    join, renamed = found
    keys = _one_key(join)
    if keys is None:
        return None
    mapping = {top_id: col(child_id) for top_id, child_id in renamed.items()}
    groups = tuple((i, substitute(e, mapping)) for i, e in top.groups)
    sides = [(join.right, join.left, 1)] + [(join.left, join.right, 0)] * (join.kind == "inner")
    for counted, kept, position in sides:  # position: the counted side's, in the join
        taken = tuple(_taken(substitute(e, mapping), set(counted.ids)) for _, e in top.aggs)
        split = _Split(join, groups, counted, kept, position, keys[position].name, taken)
        if split.applies():
            return split
    return None


def _aggregated_first(top: Aggregate, split: _Split, ids: IdAllocator) -> Node:
    """``top`` as the rule rewrites it: the counted side aggregated by its key, joined, the
    partial results summed (counts) or taken again (extremes) by ``top``'s groups."""
    counted, key = split.counted, split.key
    inner_aggs, outer_aggs, finals = _calls(top, split, ids)
    per_key = Aggregate(
        ((key, counted.type_of(key)), *((i, t) for i, t, _ in inner_aggs)),
        counted.origin,
        counted,
        ((key, col(key)),),
        tuple((i, e) for i, _, e in inner_aggs),
    )
    join = split.join
    pair = (split.kept, per_key) if split.position == 1 else (per_key, split.kept)
    met = Join(pair[0].columns + pair[1].columns, join.origin, *pair, join.kind, join.condition)
    groups = split.groups
    grouped = Aggregate(
        tuple((i, top.type_of(i)) for i, _ in groups) + tuple((i, t) for i, t, _ in outer_aggs),
        top.origin,
        met,
        groups,
        tuple((i, e) for i, _, e in outer_aggs),
    )
    exprs = tuple((i, col(i)) for i, _ in groups) + tuple(finals)
    return Project(top.columns, top.origin, grouped, exprs)


_Call = tuple[str, SqlType, exp.Expression]


def _calls(
    top: Aggregate, split: _Split, ids: IdAllocator
) -> tuple[list[_Call], list[_Call], list[tuple[str, exp.Expression]]]:
    """Each of ``top``'s calls split: the call over the counted side by its key, the one over
    those partial results by ``top``'s groups, and ``top``'s column from it."""
    inner_aggs, outer_aggs, finals = [], [], []
    for (agg_id, _), (function, argument) in zip(top.aggs, split.taken):
        partial, total = ids.new(f"{agg_id}_partial"), ids.new(agg_id)
        if function is exp.Count:
            inner_aggs.append((partial, BIGINT, exp.Count(this=col(argument))))
            outer_aggs.append((total, BIGINT, exp.Sum(this=col(partial))))
            finals.append(
                (agg_id, exp.Coalesce(this=col(total), expressions=[exp.Literal.number(0)]))
            )
        else:
            kind = split.counted.type_of(argument)
            inner_aggs.append((partial, kind, function(this=col(argument))))
            outer_aggs.append((total, kind, function(this=col(partial))))
            finals.append((agg_id, col(total)))
    return inner_aggs, outer_aggs, finals


def _taken(call: exp.Expression, counted_ids: set[str]) -> tuple[type, str] | None:
    """(COUNT, MIN or MAX, the counted side's column it takes) for a call the rule can split."""
    if type(call) not in _TAKEN or not isinstance(call.this, exp.Column):
        return None  # COUNT(*), COUNT(DISTINCT ...), an expression's extremes
    if call.this.name not in counted_ids:
        return None
    return type(call), call.this.name


def _keys_repeat(side: Node, key: str) -> bool:
    """Whether ``side`` is a table scan whose ``key`` column's values, by its files' min and
    max, span at most half its rows."""
    if not isinstance(side, Scan) or side.table.rows is None:
        return False
    column = side.table.column(dict(side.mapping).get(key, ""))
    spread = column.value_range if column is not None else None
    return spread is not None and spread * _MIN_ROWS_PER_KEY <= side.table.rows
