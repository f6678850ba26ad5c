"""What a job did and why, read from its event log: the facts ``tidal explain``, the HTML
report and ``tidal history`` show.

The log is replayed through the scheduling core (``jobmanager.core.replay``), so the state is
the one the JobManager had, decisions included, never decided again; the commands the replay
answers with (a recovering JobManager drops them) give the timeline which slot ran what. From
that state come the graph with its decided parallelisms, the bytes that crossed each edge, the
bytes per subpartition of each all-to-all result with the ranges its consumers were given,
each vertex's explanation with the figures behind it, and what was decided of each join and
each global sort (``jobmanager.client.report.decisions``). Nothing here reads a clock or a file:
``jobmanager.client.report.stores`` finds and reads a job's log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from jobmanager.client.report.decisions import (
    JoinFacts,
    SortFacts,
    add_task_bytes,
    join_facts,
    sort_facts,
)
from jobmanager.client.report.timeline import Attempt, Marker, TimelineBuilder
from jobmanager.core.executiongraph.inputs import (
    PartitionRangesInputInfo,
    WholeInputInfo,
)
from jobmanager.core.replay import new_state, replay
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.messages.joins import JoinDecision
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.operators import (
    ArrowFunction,
    ParquetSink,
    SparkFunction,
    SqlOperator,
)
from jobmanager.runtime.details import JobDetails, TaskManagerLossDetails, VertexDetails
from jobmanager.runtime.status import TaskLedger, job_status

__all__ = [
    "Attempt",
    "JobFacts",
    "JoinFacts",
    "Marker",
    "ResultFacts",
    "SortFacts",
    "SqlPiece",
    "VertexFacts",
    "facts_from_log",
    "sql_pieces",
]


@dataclass(frozen=True, slots=True)
class SqlPiece:
    """A piece of a planned query a vertex runs: the member of the vertex's chain that runs it
    (the vertex's own name when it is no chain), its Spark SQL and the part of the user's query
    it came from (``SqlOperator.origin``)."""

    member: str
    sql: str
    origin: str


def sql_pieces(name: str, operator) -> tuple[SqlPiece, ...]:
    """The SQL ``operator`` (of vertex ``name``) runs: its own, or its chain members'."""
    if isinstance(operator, ChainedOperator):
        members = zip(operator.names, operator.operators)
    else:
        members = [(name, operator)]
    return tuple(
        SqlPiece(member, op.sql, op.origin) for member, op in members if isinstance(op, SqlOperator)
    )


@dataclass(frozen=True, slots=True)
class ResultFacts:
    """One edge's result. For an all-to-all result that is not broadcast:
    ``subpartition_bytes`` (summed over its partitions) and, once the consumer's parallelism is
    decided, the first and last subpartition each consumer task reads (``consumer_ranges``), and
    ``splits``: (subpartition, pieces) for each skewed subpartition of this result cut across
    several consumers, each reading it from a range of the partitions (the other inputs'
    matching subpartition is read whole by each of them, a copy, not a cut)."""

    result: str
    source: str
    target: str
    pattern: str
    partitioner: str
    result_type: str
    bytes: int
    partitions: int
    subpartition_bytes: tuple[int, ...] = ()
    consumer_ranges: tuple[tuple[int, int], ...] = ()
    splits: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class VertexFacts:
    """One vertex: what it runs, its parallelism and where it came from (``origin``: decided,
    inferred, forward, user, fixed or undecided), the explanation and its figures, and what its
    tasks did. ``task_bytes``: the smallest and largest non-broadcast input a task was given by
    the decided ranges; ``waiting_for``: why an undecided vertex has no parallelism yet."""

    name: str
    kind: str
    operator: str
    sources: tuple[str, ...]
    parallelism: int | None
    max_parallelism: int
    origin: str
    explanation: str
    input_bytes: int
    broadcast_bytes: int
    raw: float
    clamps: tuple[str, ...]
    task_bytes: tuple[int, int] | None
    inference: str
    waiting_for: str
    tasks: int
    finished: int
    running: int
    deployments: int
    rows_in: int
    rows_out: int
    bytes_in: int
    bytes_out: int
    duration_s: float | None
    set_on: str = ""  # a chain set by the user: the member whose parallelism was set
    sql: tuple[SqlPiece, ...] = ()  # the pieces of a planned query it runs


@dataclass(frozen=True, slots=True)
class JobFacts:
    job_id: str
    name: str
    status: JobStatus
    cause: str
    submitted_ms: int
    ended_ms: int | None
    last_ms: int
    recoveries: int
    vertices: tuple[VertexFacts, ...]
    results: tuple[ResultFacts, ...]
    attempts: tuple[Attempt, ...]
    markers: tuple[Marker, ...]
    slots: tuple[tuple[str, int], ...]
    joins: tuple[JoinFacts, ...] = ()  # each join: how, when and on what it was decided
    sorts: tuple[SortFacts, ...] = ()  # each global sort: its key bounds, its tasks' bytes
    losses: tuple[TaskManagerLossDetails, ...] = ()  # each TaskManager lost, what it cost

    def vertex(self, name: str) -> VertexFacts:
        return next(v for v in self.vertices if v.name == name)

    def result(self, source: str, target: str) -> ResultFacts:
        return next(r for r in self.results if r.source == source and r.target == target)


def facts_from_log(
    graph: JobGraph,
    submitted: ev.JobSubmitted,
    records: Iterable[tuple[int, object]],
    job_id: str,
    final_status: JobDetails | None = None,
) -> JobFacts:
    """The facts of the job whose log holds ``records`` (``(time_ms, event)`` after the
    ``JobSubmitted``). ``final_status``: the status its JobManager stored when it left, which
    alone knows a job that could not be recovered."""
    state = new_state(graph, submitted, job_id)
    ledger, timeline = TaskLedger(), TimelineBuilder()
    decided: dict[str, ev.VertexParallelismDecided] = {}
    joins: dict[str, JoinDecision] = {}  # by join id, as the run time decided them
    now = [int(submitted.submitted_at * 1000)]
    ended_at: list[int] = []

    def events():
        for time_ms, event in records:
            now[0] = time_ms
            _note_decision(time_ms, event, decided, joins, ended_at)
            yield event

    def observe(event, commands) -> None:
        ledger.saw_event(event, now[0] / 1000)
        for command in commands:
            ledger.saw_command(command, now[0] / 1000)
        timeline.saw(now[0], event, commands)

    replay(state, events(), observe)
    stored_end = _stored_end(final_status, ended_at)
    ended = state.ended is not None or stored_end is not None
    status = _ended_status(
        job_status(state, ledger, job_id, submitted.submitted_at, stored_end), state, final_status
    )
    counts = {v.name: v for v in status.vertices}
    vertices = tuple(
        _vertex(state, ejv, counts[ejv.name], decided.get(ejv.name), ended)
        for ejv in state.graph.job_vertices.values()
    )
    results = tuple(_result(r) for ejv in state.graph.job_vertices.values() for r in ejv.outputs)
    ended_ms = status.ended_at * 1000 if status.ended_at else None
    return JobFacts(
        job_id,
        status.name,
        status.status,
        status.cause,
        int(submitted.submitted_at * 1000),
        None if ended_ms is None else int(ended_ms),
        max(now[0], int(ended_ms or 0)),
        state.recoveries,
        vertices,
        results,
        tuple(timeline.attempts(ended)),
        tuple(timeline.markers),
        tuple(timeline.slots),
        join_facts(graph, state, joins),
        sort_facts(state, decided),
        status.task_manager_losses,
    )


def _vertex(state, ejv, counts: VertexDetails, decision, ended: bool) -> VertexFacts:
    jv = ejv.job_vertex
    growth = state.growth
    explanation = growth.explanations.get(ejv.name) if growth is not None else None
    if decision is None and explanation is None:
        explanation = ev.Explanation(counts.explanation)
    inference = state.source_listing(ejv.name)[0]
    return VertexFacts(
        ejv.name,
        _kind(jv),
        str(jv.operator) if jv.operator is not None else "",
        tuple(repr(s) for s in jv.sources),
        ejv.parallelism,
        ejv.max_parallelism,
        _origin(ejv, decision, explanation),
        explanation.text,
        explanation.input_bytes,
        explanation.broadcast_bytes,
        explanation.raw,
        tuple(explanation.clamps),
        _task_bytes(ejv),
        inference,
        "" if ejv.parallelism is not None else _waiting_for(state, ejv, ended),
        counts.tasks,
        counts.finished,
        counts.running,
        counts.deployments,
        counts.rows_in,
        counts.rows_out,
        counts.bytes_in,
        counts.bytes_out,
        counts.duration_s,
        (jv.operator.fixed_by or "") if isinstance(jv.operator, ChainedOperator) else "",
        sql_pieces(ejv.name, jv.operator),
    )


def _kind(jv) -> str:
    operator = jv.operator
    if isinstance(operator, ChainedOperator):
        does = "chain: " + " -> ".join(_does(op) for op in operator.operators)
    else:
        does = _does(operator)
    return f"source, {does}" if jv.sources else does


def _does(operator) -> str:
    return (
        "sink"
        if isinstance(operator, ParquetSink)
        else "spark"
        if isinstance(operator, SparkFunction)
        else "sql"
        if isinstance(operator, SqlOperator)
        else "arrow"
        if isinstance(operator, ArrowFunction)
        else "pass-through"
    )


def _origin(ejv, decision, explanation) -> str:
    if ejv.parallelism is None:
        return "undecided"
    if ejv.job_vertex.parallelism is not None:  # its join may be decided, its parallelism not
        return "user"
    if decision is not None:
        return "inferred" if not ejv.inputs else "decided"
    if explanation is not None and explanation.text.startswith("forward group"):
        return "forward"
    return "fixed"


def _waiting_for(state, ejv, ended: bool) -> str:
    if ended:
        return "never decided: the job ended before its inputs were done"
    waiting = [
        f"{p.name} ({p.unfinished} of {len(p.vertices)} tasks to finish)"
        if p.is_initialized
        else f"{p.name} (not started)"
        for p in ejv.producers
        if not p.is_finished
    ]
    if waiting:
        return "waiting for its inputs: " + ", ".join(waiting)
    pending = state.growth.pending.get(ejv.name) if state.growth is not None else None
    if pending == "inferring":
        return "its sources are being listed to infer its parallelism"
    return "its parallelism is being decided"


def _task_bytes(ejv) -> tuple[int, int] | None:
    """The smallest and largest bytes of non-broadcast input the decided ranges give a task."""
    if not ejv.is_initialized:
        return None
    totals = np.zeros(len(ejv.vertices), dtype=np.float64)
    counted = [add_task_bytes(ejv, result, totals) for result in ejv.inputs]
    return (int(totals.min()), int(totals.max())) if any(counted) else None


def _note_decision(time_ms: int, event, decided: dict, joins: dict, ended_at: list) -> None:
    """Keep what the run time decided of vertices and joins, and when the job ended."""
    if type(event) is ev.VertexParallelismDecided:
        decided[event.vertex] = event
        joins.update((j.join, j) for j in event.joins)
    elif type(event) is ev.JoinChained:  # a join run in its big side's tasks
        joins[event.decision.join] = event.decision
    elif type(event) is ev.JobEnded:
        ended_at.append(time_ms)


def _stored_end(final_status: JobDetails | None, ended_at: list[int]) -> float | None:
    """When the job ended (seconds): as its JobManager stored it, else as its log last said."""
    if final_status is not None and final_status.ended_at is not None:
        return final_status.ended_at
    return ended_at[-1] / 1000 if ended_at else None


def _ended_status(status, state, final_status: JobDetails | None):
    """The status as its JobManager stored it when it left, else as the log ended it."""
    if final_status is not None:
        return replace(status, status=final_status.status, cause=final_status.cause)
    if state.ended is not None:
        return replace(status, status=state.ended[0], cause=state.ended[1])
    return status


def _result(result) -> ResultFacts:
    edge = result.edge
    produced = result.produced
    facts = ResultFacts(
        result.id,
        edge.source.name,
        edge.target.name,
        result.pattern.value.replace("_", "-"),
        str(edge.partitioner),
        edge.result_type.label,
        produced.total if produced else 0,
        len(result.partitions),
    )
    if not _charted(result):  # many subpartitions, consumer fixed: totals only
        return facts
    consumer = result.consumer
    info = consumer.input_infos.get(result.id) if consumer.is_initialized else None
    ranges: tuple[tuple[int, int], ...] = ()
    splits: tuple[tuple[int, int], ...] = ()
    if info is not None and not isinstance(info, (WholeInputInfo, PartitionRangesInputInfo)):
        # read whole, or whole producer outputs per task: no subpartition ranges, no skew cuts
        ranges, splits = _task_ranges(info), _skew_splits(info, len(result.partitions))
    return ResultFacts(
        facts.result,
        facts.source,
        facts.target,
        facts.pattern,
        facts.partitioner,
        facts.result_type,
        facts.bytes,
        facts.partitions,
        tuple(int(b) for b in produced.subpartition_sums),
        ranges,
        splits,
    )


def _charted(result) -> bool:
    """Whether the result's bytes per subpartition are known and worth a chart."""
    produced = result.produced
    return (
        produced is not None
        and produced.per_partition is None
        and not result.is_broadcast
        and produced.has_breakdown
    )


def _task_ranges(info) -> tuple[tuple[int, int], ...]:
    """The first and last subpartition each consumer task reads."""
    return tuple(
        (
            min(s.subpartitions.start for s in info[k].slices),
            max(s.subpartitions.end for s in info[k].slices),
        )
        for k in range(len(info))
    )


def _skew_splits(info, partitions: int) -> tuple[tuple[int, int], ...]:
    """(subpartition, pieces) of each subpartition cut across tasks by partition ranges."""
    whole = (0, partitions - 1)
    pieces: dict[int, int] = {}
    for k in range(len(info)):
        for piece in info[k].slices:
            if (piece.partitions.start, piece.partitions.end) != whole:  # a cut, not a copy
                for s in range(piece.subpartitions.start, piece.subpartitions.end + 1):
                    pieces[s] = pieces.get(s, 0) + 1
    return tuple(sorted((s, n) for s, n in pieces.items() if n > 1))
