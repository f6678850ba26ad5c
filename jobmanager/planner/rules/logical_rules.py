"""The planner's logical rewrites, each a named rule, in the order ``optimize`` runs them.

Each rule's docstring says what it matches and what it returns; the pass it calls says how
and why (its module's docstring). The order matters: filters reach the scans before the
columns are pruned and the joins ordered by the bytes their inputs read, the joins are ordered
while their trees are whole (before ``trim-columns`` puts projections between them), and the
join-key filters are placed last, on the joins as they will run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from jobmanager.planner.rules.eager_aggregates import aggregate_before_joins
from jobmanager.planner.rules.joinfilters import filter_by_join_keys
from jobmanager.planner.rules.joins import reorder_joins
from jobmanager.planner.logical import Node
from jobmanager.planner.rules.prune import prune_columns
from jobmanager.planner.rules.pushdown import push_filters
from jobmanager.planner.rules.context import RuleContext

__all__ = [
    "RULES",
    "AggregateBeforeJoins",
    "FilterByJoinKeys",
    "PruneColumns",
    "PushFilters",
    "ReorderJoins",
    "Rule",
    "TrimColumns",
]


class Rule:
    """A logical rewrite: ``apply`` returns the plan it makes of ``tree`` (a plan equal to it
    in rows), ``tree`` itself or a copy where nothing matches."""

    __slots__ = ()
    name: ClassVar[str]

    def apply(self, tree: Node, context: RuleContext) -> Node:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, repr=False)
class PushFilters(Rule):
    """Matches each filter and WHERE conjunct; returns the plan with each moved down to the
    scans and join sides whose columns it reads (an OR over a join's inputs also gives each
    input the OR of its own conjuncts), as low as it keeps its meaning, and an outer join
    whose added NULLs a WHERE rejects made an inner one."""

    name: ClassVar[str] = "push-filters"

    def apply(self, tree: Node, context: RuleContext) -> Node:
        return push_filters(tree)


@dataclass(frozen=True, slots=True, repr=False)
class PruneColumns(Rule):
    """Matches every node producing columns no parent reads; returns the plan with each node,
    scans first, producing only the columns read above it (joins keep their columns, so their
    trees stay whole for ``reorder-joins``)."""

    name: ClassVar[str] = "prune-columns"

    def apply(self, tree: Node, context: RuleContext) -> Node:
        return prune_columns(tree, trim=False)


@dataclass(frozen=True, slots=True, repr=False)
class ReorderJoins(Rule):
    """Matches each tree of inner and cross joins (and the semi and anti joins over one of
    its inputs); returns it joined again left-deep along its keys, the largest input first,
    the small inputs joined first to the large input they filter."""

    name: ClassVar[str] = "reorder-joins"

    def apply(self, tree: Node, context: RuleContext) -> Node:
        return reorder_joins(tree, context.broadcast_threshold)


@dataclass(frozen=True, slots=True, repr=False)
class AggregateBeforeJoins(Rule):
    """Matches a grouped aggregate over an inner or left join that only counts, or takes the
    least or greatest of, columns of the side whose key repeats; returns it over that side
    aggregated by its key first, so the join meets one row per key."""

    name: ClassVar[str] = "aggregate-before-joins"

    def apply(self, tree: Node, context: RuleContext) -> Node:
        return aggregate_before_joins(tree, context.ids)


@dataclass(frozen=True, slots=True, repr=False)
class TrimColumns(Rule):
    """Matches the columns only a join, filter, sort or limit reads; returns the plan pruned
    again with those columns dropped right above the node that read them, so fewer cross an
    exchange."""

    name: ClassVar[str] = "trim-columns"

    def apply(self, tree: Node, context: RuleContext) -> Node:
        return prune_columns(tree)


@dataclass(frozen=True, slots=True, repr=False)
class FilterByJoinKeys(Rule):
    """Matches a join whose small filtered input could drop rows of the other side where it
    is read (a grouped aggregate, a broadcast or looked-up table); returns the plan with that
    side semi-joined on the join's keys with the small input."""

    name: ClassVar[str] = "filter-by-join-keys"

    def apply(self, tree: Node, context: RuleContext) -> Node:
        return filter_by_join_keys(tree, context.static_threshold, context.read_whole)


RULES: tuple[Rule, ...] = (
    PushFilters(),
    PruneColumns(),
    ReorderJoins(),
    AggregateBeforeJoins(),
    TrimColumns(),
    FilterByJoinKeys(),
)
