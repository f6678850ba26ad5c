"""Snapshots of the JobManager state: the state itself, not the events that led to it.

Replaying a long log event by event costs what the live run cost. A snapshot holds the state
as values (every subtask's state and attempt, every partition's state and where it is, the
bytes each result produced, the adaptive decisions, the slot pool, pending restarts, the
back-off), so a JobManager taking over restores it and replays only the events logged after it.

The execution graph is rebuilt the way it grew: the same vertices initialised in the same
steps, each with the parallelisms known at that step and the ranges decided for it, so every
subtask, partition and group gets the index and id it had. Counters that follow from states
(unfinished subtasks, unfinished partitions per group, the release strategy's counts) are
counted again rather than stored. ``restore(take(state))`` describes equal to ``state``, and
the two answer every later event with the same commands; a property test holds it to that.
"""

from __future__ import annotations

import numpy as np

from jobmanager.core.executiongraph import ExecutionState, PartitionState
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.messages.codec import message
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.messages.losses import TaskManagerLoss
from jobmanager.model.config import Configuration
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.join_chains import fuse_graph

__all__ = ["StateSnapshot", "restore", "take"]

_STATES = list(ExecutionState)
_PARTITION_STATES = list(PartitionState)


@message
class StateSnapshot:
    """A JobManager state after ``events_applied`` events (see the module docstring)."""

    events_applied: int
    status: str
    failure_cause: str
    ended: tuple[str, str] | None
    recoveries: int
    task_managers: tuple[ev.TaskManagerRegistered, ...]
    growth_steps: tuple
    parallelisms: tuple[int | None, ...]
    vertex_states: bytes
    attempts: bytes
    slots_held: tuple[tuple[int, str, int], ...]
    locations: tuple[str, ...]
    partitions: tuple[tuple[bytes, bytes], ...]
    result_bytes: tuple
    strategy: tuple
    growth: tuple
    backoff: tuple
    restarts: tuple
    slot_pool: tuple
    requests: tuple[tuple[int, int], ...]
    active: int
    speculation: tuple = ()
    archived: ev.JobArchived | None = None
    files: tuple[tuple[bytes, bytes], ...] = ()  # per result: partitions' file sizes, checksums
    departed: tuple[ev.TaskManagerRegistered, ...] = ()
    losses: tuple[TaskManagerLoss, ...] = ()


def take(state: JobManagerState) -> StateSnapshot:
    graph = state.graph
    vertices = list(graph.vertices())
    locations: dict[str, int] = {}
    partitions = [_partitions(result, locations) for result in graph.results.values()]
    requests, active = state.export_deployments()
    return StateSnapshot(
        events_applied=state.events_applied,
        status=state.status.value,
        failure_cause=state.failure_cause,
        ended=state.ended,
        recoveries=state.recoveries,
        task_managers=tuple(state.task_managers.values()),
        growth_steps=tuple(graph.growth_steps),
        parallelisms=tuple(ejv.parallelism for ejv in graph.job_vertices.values()),
        vertex_states=np.array([_STATES.index(v.state) for v in vertices], np.uint8).tobytes(),
        attempts=np.array([v.attempt for v in vertices], np.int32).tobytes(),
        slots_held=tuple(
            (v.index, v.slot.task_manager, v.slot.index) for v in vertices if v.slot is not None
        ),
        locations=tuple(locations),
        partitions=tuple(partitions),
        result_bytes=tuple(
            None if r.produced is None else r.produced.export() for r in graph.results.values()
        ),
        strategy=state.strategy.export(),
        growth=() if state.growth is None else state.growth.export(),
        backoff=state.backoff.export(),
        restarts=state.restarts.export(),
        slot_pool=state.slots.export(),
        requests=requests,
        active=active,
        speculation=state.speculation.export(),
        archived=state.archived,
        files=_files(graph),
        departed=tuple(state.departed.values()),
        losses=tuple(state.losses),
    )


def restore(
    job_graph: JobGraph,
    config: Configuration,
    snapshot: StateSnapshot,
    job_id: str = "job",
    cluster_slots: int | None = None,
    inferred: tuple = (),
) -> JobManagerState:
    """``inferred``: the job's ``JobSubmitted.inferred``, which the snapshot does not hold."""
    state = JobManagerState(
        job_graph, config, job_id=job_id, cluster_slots=cluster_slots, inferred=inferred
    )
    graph = state.graph
    _regrow(graph, snapshot)
    vertices = list(graph.vertices())
    vertex_at = {v.index: v for v in vertices}.__getitem__
    _restore_progress(graph, vertices, snapshot)
    state.release.recount(state.regions)

    for registered in snapshot.task_managers:
        state.task_managers[registered.task_manager] = registered
    for registered in snapshot.departed:
        state.departed[registered.task_manager] = registered
    state.losses = list(snapshot.losses)
    pending = state.slots.restore(snapshot.slot_pool, vertex_at)
    for index, tm, slot in snapshot.slots_held:
        vertex_at(index).slot = state.slots.slot(tm, slot)
    state.restore_deployments(snapshot.requests, snapshot.active, pending)
    state.speculation.restore(snapshot.speculation)
    state.strategy.restore(snapshot.strategy, vertex_at)
    if state.growth is not None:
        state.growth.restore(snapshot.growth)
    state.backoff.restore(snapshot.backoff)
    state.restarts.restore(snapshot.restarts, vertex_at)
    state.status = JobStatus(snapshot.status)
    state.failure_cause = snapshot.failure_cause
    if snapshot.ended is not None:
        state.ended = (JobStatus(snapshot.ended[0]), snapshot.ended[1])
    state.archived = snapshot.archived
    state.recoveries = snapshot.recoveries
    state.events_applied = snapshot.events_applied
    return state


def _partitions(result, locations: dict[str, int]) -> tuple[bytes, bytes]:
    """A result's partitions' states and locations (an index into ``locations``, which
    grows; -1: none)."""
    codes = np.array([_PARTITION_STATES.index(p.state) for p in result.partitions], np.uint8)
    where = np.array(
        [
            -1 if p.location is None else locations.setdefault(p.location, len(locations))
            for p in result.partitions
        ],
        np.int32,
    )
    return codes.tobytes(), where.tobytes()


def _files(graph) -> tuple[tuple[bytes, bytes], ...]:
    """Per result, its partitions' file sizes and checksums, as their producers reported."""
    return tuple(
        (
            np.array([p.size for p in result.partitions], np.int64).tobytes(),
            np.array([p.checksum for p in result.partitions], np.uint32).tobytes(),
        )
        for result in graph.results.values()
    )


def _restore_partitions(
    result, partitions: tuple[bytes, bytes], files: tuple[bytes, bytes], locations
) -> None:
    (codes, where), (sizes, checksums), count = partitions, files, len(result.partitions)
    for p, code, at, size, checksum in zip(
        result.partitions,
        np.frombuffer(codes, np.uint8).tolist(),
        np.frombuffer(where, np.int32).tolist(),
        (np.frombuffer(sizes, np.int64) if sizes else np.zeros(count, np.int64)).tolist(),
        (np.frombuffer(checksums, np.uint32) if checksums else np.zeros(count, np.uint32)).tolist(),
    ):
        p.restore(_PARTITION_STATES[code], None if at < 0 else locations[at], size, checksum)


def _regrow(graph, snapshot: StateSnapshot) -> None:
    """Grow the execution graph again as the job did (its vertices initialised, its joins
    chained, in their order), then set every vertex's parallelism."""
    job_vertices = list(graph.job_vertices.values())
    for names, parallelisms, infos in snapshot.growth_steps:
        if names == "fuse":  # a join chained into its producer: (producer, consumer)
            graph.fuse(parallelisms, infos, fuse_graph(graph.job_graph, parallelisms, infos))
            job_vertices = list(graph.job_vertices.values())
            continue
        for ejv, parallelism in zip(job_vertices, parallelisms):
            ejv.parallelism = parallelism
        graph.initialize(
            [graph.job_vertices[n] for n in names],
            {name: dict(pairs) for name, pairs in infos},
        )
    for ejv, parallelism in zip(job_vertices, snapshot.parallelisms):
        ejv.parallelism = parallelism


def _restore_progress(graph, vertices: list, snapshot: StateSnapshot) -> None:
    """The subtasks' states and attempts, the partitions' states, locations and bytes, and
    the count of unfinished vertices."""
    codes = np.frombuffer(snapshot.vertex_states, np.uint8)
    attempts = np.frombuffer(snapshot.attempts, np.int32)
    for v, code, attempt in zip(vertices, codes.tolist(), attempts.tolist()):
        v.state, v.attempt = _STATES[code], attempt
    files = snapshot.files or [(b"", b"")] * len(snapshot.partitions)  # older snapshots: none
    for result, partitions, sizes, produced in zip(
        graph.results.values(), snapshot.partitions, files, snapshot.result_bytes
    ):
        _restore_partitions(result, partitions, sizes, snapshot.locations)
        if produced is not None:
            result.produced.restore(produced)
    unfinished = 0
    for ejv in graph.job_vertices.values():
        ejv.unfinished = sum(1 for v in ejv.vertices if v.state is not ExecutionState.FINISHED)
        unfinished += not ejv.is_finished
    graph.unfinished_job_vertices = unfinished
