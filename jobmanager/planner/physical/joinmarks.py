"""Shuffled joins marked so the JobManager may turn them into broadcast joins at run time
(FLIP-470), and the strategy, ``table.optimizer.adaptive-broadcast-join.strategy``, that says
whether it may and whether the planner still broadcasts from the listing.

The planner decides a join's strategy from listed bytes, an estimate made before anything ran;
after the join's inputs are produced the JobManager knows their real bytes, and a side that
turned out small can be sent whole to every task of the join instead of being hashed (its
producer's output read whole by each task), the other side then read in any slices. For that
each input edge of a shuffled join carries a ``JoinInput``: which join (an id shared by its two
edges), the join's kind (which decides the side that may be broadcast) and which side it is.

The marked stage's SQL does not change with the run-time decision and needs not: it joins its
two views, whatever rows each holds, and nothing in it assumes they were hashed alike unless
``Stage.relies_on_partitioning`` says so, which clears ``redistributable``: an aggregate or a
window the join's hashing already grouped, or a join that reads another input hashed on the same
keys (a per-task dedup of a side, an IN over a DISTINCT subquery, is such an aggregate: it is
in the join's stage only when co-partitioned there, and then that join is not marked at all).
The in-task ``BROADCAST`` hint names the side the estimates call smaller; where the run time
broadcasts the other one the hint still gives the same rows, only another in-task plan.

- ``NONE``: no marks; joins broadcast from the listing as before.
- ``AUTO`` (the default): the listing's small sides are broadcast by the planner as before; the
  joins it shuffles are marked.
- ``RUNTIME_ONLY``: the planner broadcasts no equi-join (each is shuffled and marked), so only
  real bytes decide; a join without equality keys still broadcasts a side, as it cannot be hashed.
  Inner joins are still ordered by the listing (``joins.reorder_joins``: small inputs first),
  which orders, and does not decide, how each is run.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobmanager.model.config import AUTO, NONE
from jobmanager.model.jobgraph import PartitionerKind
from jobmanager.model.joins import JoinInput
from jobmanager.planner.logical import Join, Node, Project
from jobmanager.planner.physical.cut import Input, Stage, StageEdge
from jobmanager.planner.physical.graph import stages_in_order

__all__ = ["mark_joins"]


# The logical plan's join kinds (translate and subqueries already read Spark's spellings: LEFT
# [OUTER] -> left, LEFT SEMI, EXISTS and IN -> semi, LEFT ANTI, NOT EXISTS and NOT IN -> anti)
# as JoinInput names them; cross and single (a scalar subquery's row) joins have no keys to
# hash on, so they are never shuffled joins and never marked.
_KINDS = {
    "inner": "inner",
    "left": "left",
    "right": "right",
    "full": "full",
    "semi": "semi",
    "anti": "anti",
}


def mark_joins(result: Stage, strategy: str = AUTO) -> int:
    """Mark both input edges of every shuffled join among ``result``'s stages (producers
    first, so the ids read j1, j2, ... from the scans up), none under NONE; returns how many
    joins it marked."""
    count = 0
    if strategy == NONE:
        return count
    for stage in stages_in_order(result):
        found = shuffled_join(stage)
        if found is None:
            continue
        join, left, right = found
        count += 1
        name, kind = f"j{count}", _KINDS[join.kind]
        redistributable = not stage.relies_on_partitioning
        left.join = JoinInput(name, kind, "left", redistributable)
        right.join = JoinInput(name, kind, "right", redistributable)
    return count


def shuffled_join(stage: Stage) -> tuple[Join, StageEdge, StageEdge] | None:
    """The join of ``stage`` whose two sides are its two non-broadcast inputs, both hashed,
    with their edges (left, right); None unless those inputs are exactly one join's two sides
    (the JobManager decides only such a vertex's join: ``core.scheduler.adaptive.joins``).

    A stage with a third hashed input (a join on keys the stage is already hashed on, reading
    it by the same subpartitions) or a join side computed in the stage (an aggregate hashed
    there) is not marked: broadcasting one side would leave the others to be read by hash
    subpartition still, and which pair the run time should turn would be ambiguous; with two
    such inputs, both the join's, the choice is the join's alone. A broadcast input (a small
    dimension joined after it) is read whole by every task either way, so it does not count."""
    hashed = {id(e) for e in stage.inputs if not e.partitioner.is_broadcast}
    if len(hashed) != 2 or stage.tree is None:
        return None
    for node in _nodes(stage.tree):
        sides = _sides(stage, node)
        if sides is not None and {id(e) for e in sides} == hashed:
            return node, *sides
    return None


def _sides(stage: Stage, node: Node) -> tuple[StageEdge, StageEdge] | None:
    """The edges of ``node``'s two sides when it is a join of two hashed inputs of the stage."""
    if not isinstance(node, Join) or node.kind not in _KINDS:
        return None
    right = node.right
    if (
        isinstance(right, Join)
        and isinstance(right.right, Project)
        and right.right.child is node.left
    ):
        right = right.left  # cut to the left side's keys in the task: exact however split
    if not (isinstance(node.left, Input) and isinstance(right, Input)):
        return None
    edges = (_edge(stage, node.left), _edge(stage, right))
    if all(e.partitioner.kind is PartitionerKind.HASH for e in edges):
        return edges
    return None


def _edge(stage: Stage, leaf: Input) -> StageEdge:
    """The input edge whose rows ``leaf`` reads (view ``in<n>``: the stage's n-th input)."""
    return stage.inputs[int(leaf.view[len("in") :])]


def _nodes(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _nodes(child)
