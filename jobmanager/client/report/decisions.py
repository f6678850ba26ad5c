"""What was decided of each join and each global sort of a job, for ``tidal explain`` and the
report: the facts behind "why did this join broadcast?" and "why did this sort task get that?".

A join is decided in one of two places. The planner settles it from the listing (a side whose
listed bytes, times the share of rows its filters are guessed to keep, are under the threshold
broadcast, or both sides hashed) and says so on the vertex that runs it
(``PlannedJoin`` on its ``SqlOperator``), or it marks it (``JoinInput``) and the JobManager
decides it once both sides are written, from their real bytes (``JoinDecision``, in the log's
``VertexParallelismDecided``). Each join here says which, on which bytes against which
threshold, after which producers, and what moved for each side: ``shuffled`` (by hash
subpartition), ``broadcast`` (whole to every task), ``read locally`` (whole outputs of
consecutive producers, Spark's local shuffle reader), ``chained`` (computed in the join's own
task, never written) or the edge's partitioner for anything else.

A global sort (a range-partitioned input) shows its key bounds, decoded to values where the
sort keys carry their types (``shuffle.keydecode.decode_key``, else hex), and the bytes each
range's task was given.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from jobmanager.core.executiongraph.inputs import WholeInputInfo
from jobmanager.messages.joins import JoinDecision
from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.config import (
    BROADCAST_THRESHOLD,
    joins_decided_at_run_time,
    static_broadcast_threshold,
)
from jobmanager.model.joins import PlannedJoin
from jobmanager.model.operators import SqlOperator
from shuffle.keydecode import decode_key

__all__ = [
    "JoinFacts",
    "JoinSideFacts",
    "SortFacts",
    "add_task_bytes",
    "join_facts",
    "key_text",
    "sort_facts",
]

_MOVED = {
    JoinDecision.SUBPARTITIONS: "shuffled",
    JoinDecision.LOCAL: "read locally",
    JoinDecision.CHAINED: "chained",
}


@dataclass(frozen=True, slots=True)
class JoinSideFacts:
    """One side of a join: the vertex writing it ("" when the join's own task computes it),
    the bytes its decision held against the threshold (estimated when planned, written when
    decided at run time; -1: unknown, or not written yet when decided), the bytes its edge
    carried (-1: no edge, or nothing written yet) and how it reached the join's tasks."""

    side: str
    producer: str
    bytes: int
    written: int
    moved: str


@dataclass(frozen=True, slots=True)
class JoinFacts:
    """``vertex``: the task (vertex or chain) that runs the join. ``strategy``: broadcast,
    shuffled, or "" while undecided; ``side``: the side broadcast, or the one built on ("":
    unknown). ``when``: ``planned`` (from the listing), ``run time`` or ``pending``.
    ``decided_after``: the producers a run-time decision waited for. ``note``: why a marked
    join kept its plan, or what a pending one waits for."""

    join: str
    kind: str
    vertex: str
    strategy: str
    side: str
    when: str
    threshold: int
    decided_after: tuple[str, ...]
    left: JoinSideFacts
    right: JoinSideFacts
    note: str = ""


@dataclass(frozen=True, slots=True)
class SortFacts:
    """A vertex sorting a range-partitioned input from ``source`` by ``order``: its tasks'
    ``bounds`` (k - 1 for k tasks, as text; empty when one task or not decided) and the input
    bytes each task was given (empty until decided)."""

    vertex: str
    source: str
    order: str
    decided: bool
    bounds: tuple[str, ...]
    task_bytes: tuple[int, ...]


def join_facts(graph, state, decisions: dict[str, JoinDecision]) -> tuple[JoinFacts, ...]:
    """Every join of ``graph`` (the job as submitted, before chaining) that is planned or
    marked, with what ``state`` (replayed) and the run time's ``decisions`` (by join id: from
    ``VertexParallelismDecided`` and ``JoinChained``) say of it."""
    chain_of = {
        name: ejv.name for ejv in state.graph.job_vertices.values() for name in _members(ejv)
    }
    written = _written(graph, state, chain_of)
    config = state.config
    thresholds = (
        static_broadcast_threshold(config),
        config[BROADCAST_THRESHOLD.key],
        not joins_decided_at_run_time(config),
    )
    found = []
    for vertex in graph.topological_order():
        runs = chain_of.get(vertex.name, vertex.name)
        context = (runs, chain_of, written, state.graph.job_vertex(runs), thresholds)
        for join, plan, edges in _joins_of(vertex):
            found.append(_join(vertex, join, plan, edges, decisions.get(join), context))
    return tuple(found)


def _joins_of(vertex):
    """Each join ``vertex`` runs, planned (on its ``SqlOperator``) or marked (on its input
    edges), as (join id, its ``PlannedJoin`` or None, its edge by side)."""
    operator = vertex.operator
    planned = {p.join: p for p in operator.joins} if isinstance(operator, SqlOperator) else {}
    marked: dict[str, dict[str, object]] = defaultdict(dict)
    for edge in vertex.inputs:
        if edge.join is not None:
            marked[edge.join.join][edge.join.side] = edge
    for join in [*planned, *(j for j in marked if j not in planned)]:
        plan, marks = planned.get(join), marked.get(join, {})
        yield (
            join,
            plan,
            {side: _side_edge(vertex, plan, marks, side) for side in ("left", "right")},
        )


def _join(vertex, join: str, plan: PlannedJoin | None, edges: dict, decision, context) -> JoinFacts:
    runs, chain_of, written, ejv, thresholds = context
    kind = (
        plan.kind
        if plan is not None
        else next(e.join.kind for e in edges.values() if e is not None)
    )
    producers = tuple(e.source.name if e is not None else "" for e in edges.values())
    strategy, side, when, threshold, after, note = _decided(
        vertex, plan, decision, producers, ejv, thresholds
    )
    sides = [
        JoinSideFacts(
            name,
            _producer(vertex, plan, name, edge),
            _held_bytes(plan, name, decision),
            written.get(id(edge), -1) if edge is not None else -1,
            _side_moved(vertex, plan, name, edge, decision, chain_of, runs),
        )
        for name, edge in edges.items()
    ]
    return JoinFacts(join, kind, runs, strategy, side, when, threshold, after, *sides, note=note)


def _decided(vertex, plan, decision, producers: tuple[str, ...], ejv, thresholds) -> tuple:
    """(strategy, side, when, threshold, decided after, note) of a join: decided at run time,
    planned from the listing, or marked for the run time and not (yet) decided by it."""
    static, run_time, off = thresholds
    if decision is not None:
        after = decision.decided_after or tuple(p for p in producers if p)
        return decision.strategy, decision.side, "run time", decision.threshold, after, ""
    if plan is not None and plan.strategy != PlannedJoin.RUNTIME:
        return plan.strategy, plan.side, "planned", static, (), ""
    return _undecided(vertex, plan, producers, ejv, run_time, off)


def _undecided(vertex, plan, producers: tuple[str, ...], ejv, run_time: int, off: bool) -> tuple:
    """A join marked for the run time but not decided by it: pending while its vertex waits
    for its parallelism, else kept as planned (shuffled)."""
    side = plan.side if plan is not None else ""
    if ejv.parallelism is None:
        waits = " and ".join(repr(p) for p in producers if p)
        return "", side, "pending", run_time, (), f"to be decided at run time once {waits} finish"
    note = "kept as planned, not decided at run time" + _why_kept(vertex, off)
    return JoinDecision.SHUFFLED, side, "planned", run_time, (), note


def _why_kept(vertex, adaptive_off: bool) -> str:
    """Why a join marked for the run time kept its plan ("" when no reason is known)."""
    if vertex.sources:
        return ": its vertex reads sources"
    if vertex.parallelism is not None:
        return ": its parallelism was set by the user"
    if adaptive_off:
        return ": adaptive broadcast joins are off (strategy NONE)"
    return ""


def _held_bytes(plan, side: str, decision) -> int:
    """The bytes of ``side`` the decision held against the threshold (-1: unknown)."""
    if decision is not None:
        return decision.left_bytes if side == "left" else decision.right_bytes
    return plan.listed(side) if plan is not None else -1


def _producer(vertex, plan, side: str, edge) -> str:
    return edge.source.name if edge is not None else _read_whole(vertex, plan, side)


def _side_moved(vertex, plan, side: str, edge, decision, chain_of: dict, runs: str) -> str:
    if edge is None and _read_whole(vertex, plan, side):
        return "read whole"
    return _moved(edge, side, decision, chain_of, runs)


def _moved(edge, side: str, decision: JoinDecision | None, chain_of: dict, runs: str) -> str:
    if edge is None or chain_of.get(edge.source.name, edge.source.name) == runs:
        return "chained"
    if decision is not None:
        if not decision.is_broadcast:
            return "shuffled"
        if decision.side == side:
            return "broadcast"
        return _MOVED.get(decision.other_read, "shuffled")
    if edge.is_broadcast:
        return "broadcast"
    if edge.partitioner is not None and edge.partitioner.keys:
        return "shuffled"
    return str(edge.partitioner or "rescale")


def _read_whole(vertex, plan: PlannedJoin | None, side: str) -> str:
    """``table t (read by every task)`` for a side the vertex's tasks read whole themselves
    (a ``BroadcastSource``), else ""."""
    view = plan.view(side) if plan is not None else ""
    if not view.startswith("s"):
        return ""
    source = vertex.sources[int(view[len("s") :])]
    if not isinstance(source, BroadcastSource):
        return ""
    return f"table {os.path.basename(source.source.paths[0].rstrip('/'))} (read by every task)"


def _side_edge(vertex, plan: PlannedJoin | None, marks: dict, side: str):
    if plan is None:
        return marks.get(side)
    view = plan.view(side)
    return vertex.inputs[int(view[len("in") :])] if view.startswith("in") else None


def _members(ejv) -> tuple[str, ...]:
    operator = ejv.job_vertex.operator
    return operator.names if isinstance(operator, ChainedOperator) else (ejv.name,)


def _written(graph, state, chain_of: dict) -> dict[int, int]:
    """The bytes each edge of ``graph`` carried (by ``id(edge)``), found as the k-th result
    between the same two tasks of the chained graph; an edge inside a chain has none."""
    results: dict[tuple[str, str], list] = defaultdict(list)
    for ejv in state.graph.job_vertices.values():
        for result in ejv.inputs:
            results[(result.edge.source.name, result.edge.target.name)].append(result)
    edges: dict[tuple[str, str], list] = defaultdict(list)
    for edge in graph.edges:
        ends = (
            chain_of.get(edge.source.name, edge.source.name),
            chain_of.get(edge.target.name, edge.target.name),
        )
        if ends[0] != ends[1]:
            edges[ends].append(edge)
    return {
        id(edge): (result.produced.total if result.produced is not None else -1)
        for ends, found in edges.items()
        for edge, result in zip(found, results[ends])
    }


def sort_facts(state, decided: dict) -> tuple[SortFacts, ...]:
    """Each vertex reading a range-partitioned input, with the bounds its decision chose."""
    found = []
    for ejv in state.graph.job_vertices.values():
        for result in ejv.inputs:
            partitioner = result.edge.partitioner
            if partitioner is None or not partitioner.is_range:
                continue
            event = decided.get(ejv.name)
            totals = np.zeros(len(ejv.vertices) if ejv.is_initialized else 0, dtype=np.float64)
            if ejv.is_initialized:
                add_task_bytes(ejv, result, totals)
            order = partitioner.order
            bounds = tuple(key_text(b, order) for b in event.range_bounds) if event else ()
            found.append(
                SortFacts(
                    ejv.name,
                    result.edge.source.name,
                    ", ".join(map(str, order)),
                    event is not None,
                    bounds,
                    tuple(int(t) for t in totals),
                )
            )
    return tuple(found)


def key_text(key: bytes, order) -> str:
    """A sort key as values (strings quoted, NULL for a null), or as hex where it cannot be
    read back (a key column's type unknown)."""
    try:
        values = decode_key(key, order)
    except (ValueError, IndexError):
        return "0x" + key.hex()
    shown = [
        "NULL"
        if v is None
        else repr(v)
        if isinstance(v, (str, bytes))
        else v.isoformat()
        if hasattr(v, "isoformat")
        else str(v)
        for v in values
    ]
    return shown[0] if len(shown) == 1 else "(" + ", ".join(shown) + ")"


def add_task_bytes(ejv, result, totals: np.ndarray) -> bool:
    """Add to ``totals`` (one per task of ``ejv``) the bytes of ``result`` its decided ranges
    give each task; the part of a subpartition cut across tasks is estimated from its
    partitions' share, as the decider does. False where ``result`` is read whole by every
    task (broadcast) or not known yet: it is no task's share."""
    info, produced = ejv.input_infos.get(result.id), result.produced
    if result.is_broadcast or isinstance(info, WholeInputInfo) or info is None or produced is None:
        return False
    if produced.per_partition is not None:
        _add_counted_bytes(info, produced, totals)
    else:
        _add_estimated_bytes(info, produced, totals, len(result.partitions))
    return True


def _add_counted_bytes(info, produced, totals: np.ndarray) -> None:
    """Each task's bytes, summed from the bytes counted per partition and subpartition."""
    for k in range(len(info)):
        for piece in info[k].slices:
            sub = piece.subpartitions
            for p in range(piece.partitions.start, piece.partitions.end + 1):
                totals[k] += produced.per_partition[p][sub.start : sub.end + 1].sum()


def _add_estimated_bytes(info, produced, totals: np.ndarray, partitions: int) -> None:
    """Each task's bytes from the subpartitions' sums, a partition range cut across tasks
    estimated by its partitions' share of the whole."""
    prefix = np.concatenate(([0], np.cumsum(produced.subpartition_sums)))
    whole = int(produced.partition_totals.sum())
    for k in range(len(info)):
        for piece in info[k].slices:
            sub, parts = piece.subpartitions, piece.partitions
            size = float(prefix[sub.end + 1] - prefix[sub.start])
            if whole and (parts.start, parts.end) != (0, partitions - 1):
                size *= produced.partition_totals[parts.start : parts.end + 1].sum() / whole
            totals[k] += size
