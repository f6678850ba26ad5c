"""Deciding a join's strategy from the bytes its inputs really produced (FLIP-470).

A planner cannot know how big a join's sides will be after filters and aggregations; the
JobManager can, once their producers finished. When the vertex's only non-broadcast inputs are
the two sides of one join, each shuffled on the join's keys, the decision is made with the
vertex's parallelism, from the same bytes, and recorded in the same event (``JoinDecision``):

- a side the join's kind allows to broadcast (``JoinInput.may_be_broadcast``) that wrote at
  most ``table.optimizer.join.broadcast-threshold`` is read whole by every task (all
  subpartitions of all partitions: its producers wrote one subpartition per possible
  consumer); of two such sides, the smaller. Its bytes do not count towards the parallelism,
  and no skewed subpartition is cut: a broadcast join has no key partners to keep together.
  The other side is read as whole producer outputs, consecutive producers per task balanced by
  bytes (Spark's local shuffle reader), when nothing after the join relies on its hash
  partitioning (``redistributable``) and it has at least as many producers as tasks; else by
  subpartition ranges, as a shuffled input would be.
- otherwise the join stays shuffled, its hash table built on the smaller side; the ranges are
  decided as for any vertex.

Pure functions of the graph's marks and byte counts; the scheduler applies the result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from jobmanager.core.executiongraph.inputs import (
    BroadcastInputInfo,
    PartitionRangesInputInfo,
    WholeInputInfo,
)
from jobmanager.core.scheduler.adaptive.decider import (
    decide_vertex,
    describe_bytes,
    starting_parallelism,
)
from jobmanager.core.scheduler.adaptive.decision import (
    DeciderSettings,
    InputStats,
    VertexDecision,
)
from jobmanager.core.scheduler.adaptive.packing import Items, exact_count_ranges
from jobmanager.messages.events import Explanation
from jobmanager.messages.joins import JoinDecision
from jobmanager.model.jobgraph import DistributionPattern, PartitionerKind
from jobmanager.model.joins import JoinInput
from shuffle.ranges import even_ranges

__all__ = ["JoinSide", "JoinSides", "decide_join", "decide_join_vertex", "join_sides", "kind_words"]

_KIND_WORDS = {"left": "left outer", "right": "right outer", "full": "full outer"}


def kind_words(kind: str) -> str:
    """A join kind as a sentence names it: "left outer", "inner", "semi"."""
    return _KIND_WORDS.get(kind, kind)


@dataclass(frozen=True)
class JoinSide:
    """One input of a join: the result read, the vertex producing it, the graph's mark."""

    result: str
    producer: str
    mark: JoinInput


@dataclass(frozen=True)
class JoinSides:
    left: JoinSide
    right: JoinSide

    @property
    def join(self) -> str:
        return self.left.mark.join

    @property
    def kind(self) -> str:
        return self.left.mark.kind

    def side(self, name: str) -> JoinSide:
        return self.left if name == "left" else self.right


def join_sides(inputs) -> JoinSides | None:
    """The two sides of the one join a vertex runs, from its inputs (``IntermediateResult``):
    only when its non-broadcast inputs are exactly both sides of one join, each hash
    partitioned on its keys and blocking (the vertex waits for both anyway, so deciding costs
    no time); else None, and the plan stays as it is."""
    shuffled = [r for r in inputs if not r.is_broadcast]
    if len(shuffled) != 2 or not all(_decidable(r) for r in shuffled):
        return None
    a, b = shuffled
    if a.edge.join.join != b.edge.join.join or a.edge.join.side == b.edge.join.side:
        return None
    left, right = (a, b) if a.edge.join.side == "left" else (b, a)
    return JoinSides(*(JoinSide(r.id, r.producer.name, r.edge.join) for r in (left, right)))


def _decidable(result) -> bool:
    return (
        result.edge.join is not None
        and result.edge.partitioner.kind is PartitionerKind.HASH
        and result.pattern is DistributionPattern.ALL_TO_ALL
        and result.result_type.is_reconsumable
        and not result.result_type.can_be_pipelined
    )


def decide_join(
    sides: JoinSides, left_bytes: int, right_bytes: int, threshold: int
) -> JoinDecision:
    """Broadcast the smaller side that may be broadcast and is at most ``threshold`` bytes
    (-1: never); else shuffled, built on the smaller side (the left on a tie)."""
    sizes = {"left": left_bytes, "right": right_bytes}
    small = [
        (size, name)
        for name, size in sizes.items()
        if sides.side(name).mark.may_be_broadcast and 0 <= threshold and size <= threshold
    ]
    after = (
        f"decided once {sides.left.producer!r} (left) and {sides.right.producer!r} (right) finished"
    )
    head = f"join {sides.join!r} ({kind_words(sides.kind)})"
    sizes_text = f"left {describe_bytes(left_bytes)}, right {describe_bytes(right_bytes)}"
    if small:
        side = min(small)[1]
        text = (
            f"{head}: broadcast join, the {side} side sent whole to every task "
            f"({describe_bytes(sizes[side])} <= threshold {describe_bytes(threshold)}; "
            f"{sizes_text}), {after}"
        )
        strategy = JoinDecision.BROADCAST
    else:
        side = "left" if left_bytes <= right_bytes else "right"
        text = (
            f"{head}: shuffled hash join built on the {side} side, the smaller "
            f"({sizes_text}; {_why_not_broadcast(sides, threshold)}), {after}"
        )
        strategy = JoinDecision.SHUFFLED
    return JoinDecision(
        sides.join,
        strategy,
        side,
        left_bytes,
        right_bytes,
        threshold,
        text,
        sides.kind,
        (sides.left.producer, sides.right.producer),
    )


def _why_not_broadcast(sides: JoinSides, threshold: int) -> str:
    allowed = [name for name in ("left", "right") if sides.side(name).mark.may_be_broadcast]
    if not allowed:
        return f"a {kind_words(sides.kind)} join broadcasts neither side"
    if threshold < 0:
        return "the broadcast threshold is off"
    if len(allowed) == 2:
        return f"both sides are above threshold {describe_bytes(threshold)}"
    return f"the {allowed[0]} side, which it may broadcast, is above threshold {describe_bytes(threshold)}"


def decide_join_vertex(
    inputs: list[InputStats],
    sides: JoinSides,
    user_parallelism: int | None,
    vertex_max_parallelism: int,
    settings: DeciderSettings,
    threshold: int,
) -> VertexDecision:
    """The vertex's decision with its join decided from the same bytes (see the module)."""
    by_result = {s.result: s for s in inputs}
    left, right = by_result[sides.left.result], by_result[sides.right.result]
    join = decide_join(sides, left.total, right.total, threshold)
    if not join.is_broadcast:
        decision = decide_vertex(inputs, user_parallelism, vertex_max_parallelism, settings)
        return _with_join(decision, join)
    small, other = (left, right) if join.side == "left" else (right, left)
    other_side = sides.right if join.side == "left" else sides.left
    marked = [_marked(s, small, other) for s in inputs]
    settings = replace(settings, split_skew=False)
    decision = None
    if other_side.mark.redistributable:
        decision = _local_read(marked, other, user_parallelism, vertex_max_parallelism, settings)
    join = replace(
        join, other_read=JoinDecision.SUBPARTITIONS if decision is None else JoinDecision.LOCAL
    )
    if decision is None:
        decision = decide_vertex(marked, user_parallelism, vertex_max_parallelism, settings)
    infos = dict(decision.input_infos)
    infos[small.result] = WholeInputInfo(
        small.num_partitions, len(small.subpartition_bytes), decision.parallelism
    )
    return _with_join(replace(decision, input_infos=infos), join)


def _local_read(
    marked: list[InputStats],
    other: InputStats,
    user_parallelism: int | None,
    vertex_max_parallelism: int,
    settings: DeciderSettings,
) -> VertexDecision | None:
    """The other side read as whole outputs of consecutive producers, balanced by bytes into
    the formula's parallelism; None when there are fewer producers than tasks (a producer's
    output would have to be cut by subpartitions, which ranges already do)."""
    parallelism, _, raw, clamps, notes = starting_parallelism(
        other.total, True, user_parallelism, vertex_max_parallelism, settings
    )
    if other.num_partitions < parallelism:
        return None
    ranges = exact_count_ranges(Items.of(other.partition_bytes), parallelism)
    how = "balanced by bytes"
    if ranges is None:
        ranges, how = even_ranges(other.num_partitions, parallelism), "split evenly by count"
    cuts = tuple(r.start for r in ranges) + (ranges[-1].end + 1,)
    infos: dict = {other.result: PartitionRangesInputInfo(len(other.subpartition_bytes), cuts)}
    broadcast_bytes = 0
    for stats in marked:
        if stats.broadcast:
            infos[stats.result] = BroadcastInputInfo(stats.num_partitions, parallelism)
            broadcast_bytes += stats.total
    notes.append(f"{describe_bytes(broadcast_bytes)} broadcast, not counted")
    notes.append(f"{other.result!r}: whole outputs of consecutive producers, {how}")
    ordered = {s.result: infos[s.result] for s in marked}
    explanation = Explanation(
        "; ".join(notes), other.total, broadcast_bytes, round(raw, 4), tuple(clamps)
    )
    return VertexDecision(parallelism, ordered, explanation)


def _with_join(decision: VertexDecision, join: JoinDecision) -> VertexDecision:
    """The join's words lead the explanation: they say why the numbers after them are so."""
    explanation = replace(decision.explanation, text=f"{join.text}; {decision.explanation.text}")
    return replace(decision, explanation=explanation, joins=(join,))


def _marked(stats: InputStats, small: InputStats, other: InputStats) -> InputStats:
    """An input of a broadcast join: the small side broadcast, the other not to be cut."""
    if stats is small:
        return replace(stats, broadcast=True)
    if stats is other:
        return replace(stats, splittable=False)
    return stats
