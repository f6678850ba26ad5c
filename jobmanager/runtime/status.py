"""A job's status, for people: per vertex, its parallelism and why, its tasks, rows and bytes.

The JobManager shell feeds a ``TaskLedger`` the events and commands that pass through it and
builds the job's ``JobDetails`` (``jobmanager.runtime.details``) from it and the scheduling
state on request; the client turns them into a ``JobResult``. Nothing here changes what the
scheduler does.
"""

from __future__ import annotations

import resource
from array import array

import numpy as np

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionState
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.chaining import ChainedOperator
from jobmanager.runtime.details import (
    JobDetails,
    ProcessFigures,
    TaskManagerLossDetails,
    VertexDetails,
)

__all__ = ["TaskLedger", "empty_status", "job_status", "process_figures"]


class TaskLedger:
    """Counts deployments and running tasks, and keeps each subtask's latest metrics. Fed the
    time each event was logged, so a replay of the log rebuilds the same ledger."""

    def __init__(self) -> None:
        self.deployments: dict[str, int] = {}
        self.running: set[tuple[str, int, int]] = set()
        self.max_running = 0
        self.metrics: dict[tuple[str, int], ev.TaskMetrics] = {}
        self.started_at: dict[str, float] = {}
        self.finished_at: dict[str, float] = {}
        self.deployed_at: dict[tuple[str, int, int], float] = {}
        self.overhead_s = 0.0
        self.finished = 0
        self.first_finished_at: float | None = None

    def saw_command(self, command: object, now: float) -> None:
        if type(command) is cmd.DeployTask:
            self.deployments[command.vertex] = self.deployments.get(command.vertex, 0) + 1
            self.started_at.setdefault(command.vertex, now)
            self.deployed_at[(command.vertex, command.subtask, command.attempt)] = now

    def saw_event(self, event: object, now: float) -> None:
        kind = type(event)
        if kind is ev.TaskRunning:
            self.running.add((event.vertex, event.subtask, event.attempt))
            self.max_running = max(self.max_running, len(self.running))
        elif kind in (ev.TaskFinished, ev.TaskFailed, ev.TaskCanceled):
            self.running.discard((event.vertex, event.subtask, event.attempt))
            deployed = self.deployed_at.pop((event.vertex, event.subtask, event.attempt), None)
            if kind is ev.TaskFinished:
                if self.first_finished_at is None:
                    self.first_finished_at = now
                if event.metrics is not None:
                    self.metrics[(event.vertex, event.subtask)] = event.metrics
                    if deployed is not None:
                        self.overhead_s += now - deployed - event.metrics.duration_ms / 1000
                        self.finished += 1
                self.finished_at[event.vertex] = now

    def export(self) -> tuple:
        return (
            tuple(self.deployments.items()),
            tuple(self.running),
            self.max_running,
            tuple(self.metrics.items()),
            tuple(self.started_at.items()),
            tuple(self.finished_at.items()),
            tuple(self.deployed_at.items()),
            self.overhead_s,
            self.finished,
            self.first_finished_at,
        )

    @staticmethod
    def restore(image: tuple) -> TaskLedger:
        ledger = TaskLedger()
        (
            deployments,
            running,
            ledger.max_running,
            metrics,
            started,
            finished,
            deployed,
            ledger.overhead_s,
            ledger.finished,
            ledger.first_finished_at,
        ) = image
        ledger.deployments = dict(deployments)
        ledger.running = {tuple(key) for key in running}
        ledger.metrics = {tuple(key): m for key, m in metrics}
        ledger.started_at = dict(started)
        ledger.finished_at = dict(finished)
        ledger.deployed_at = {tuple(key): at for key, at in deployed}
        return ledger


def job_status(
    state, ledger: TaskLedger, job_id: str, submitted_at: float, ended_at: float | None
) -> JobDetails:
    """The job's details from its scheduling state and ledger, as the core has the job (the
    JobManager says FINISHING or RECONCILING over it when the shell knows better)."""
    vertices = tuple(
        _vertex_details(state, ejv, ledger) for ejv in state.graph.job_vertices.values()
    )
    return JobDetails(
        job_id=job_id,
        name=state.graph.job_graph.name,
        status=state.status,
        cause=state.failure_cause or "",
        submitted_at=submitted_at,
        ended_at=ended_at,
        max_running_tasks=ledger.max_running,
        task_overhead_ms=round(1000 * ledger.overhead_s / max(ledger.finished, 1), 3),
        first_deployed_at=min(ledger.started_at.values(), default=None),
        first_task_finished_at=ledger.first_finished_at,
        task_managers=tuple(sorted(state.task_managers)),
        recoveries=state.recoveries,
        vertices=vertices,
        pid=0,
        jobmanager=None,
        task_manager_losses=_loss_details(state),
    )


def _loss_details(state) -> tuple[TaskManagerLossDetails, ...]:
    """Each TaskManager lost; recovered once every subtask it sent back finished again."""
    if not state.losses:
        return ()
    finished = {v.index for v in state.graph.vertices() if v.state is ExecutionState.FINISHED}
    return tuple(
        TaskManagerLossDetails(
            loss.task_manager,
            loss.node,
            loss.time_ms,
            loss.running,
            loss.rerun,
            loss.kept,
            finished.issuperset(loss.subtasks),
        )
        for loss in state.losses
    )


def _vertex_details(state, ejv, ledger: TaskLedger) -> VertexDetails:
    subtasks = ejv.vertices
    metrics = [m for (name, _), m in ledger.metrics.items() if name == ejv.name]
    start, end = ledger.started_at.get(ejv.name), ledger.finished_at.get(ejv.name)
    operator = ejv.job_vertex.operator
    return VertexDetails(
        name=ejv.name,
        members=tuple(operator.names) if isinstance(operator, ChainedOperator) else (ejv.name,),
        parallelism=ejv.parallelism,
        max_parallelism=ejv.max_parallelism,
        tasks=len(subtasks),
        finished=_count_in(subtasks, ExecutionState.FINISHED),
        running=_count_in(subtasks, ExecutionState.RUNNING),
        deployments=ledger.deployments.get(ejv.name, 0),
        phases_ms=_phases(metrics),
        **_totals(metrics),
        bytes_out=sum(r.produced.total for r in ejv.outputs if r.produced is not None),
        duration_s=_duration(ejv, start, end),
        started_at=start,
        explanation=_explanation(state, ejv),
    )


def _count_in(subtasks: list, state: ExecutionState) -> int:
    return sum(1 for v in subtasks if v.state is state)


def _duration(ejv, start: float | None, end: float | None) -> float | None:
    """How long a finished vertex ran (seconds), from its first start to its last end."""
    return round(end - start, 3) if start and end and ejv.is_finished else None


def _explanation(state, ejv) -> str:
    """Why the vertex has its parallelism: as decided at run time, else why it was fixed."""
    explanation = state.growth.explanations.get(ejv.name) if state.growth else None
    if explanation:
        return explanation.text
    return _fixed_reason(
        ejv,
        state.status not in (JobStatus.CREATED, JobStatus.RUNNING),
        state.source_listing(ejv.name)[0],
    )


_SUMMED = (
    "rows_in",
    "rows_out",
    "bytes_in",
    "bytes_in_remote",
    "ranges_read",
    "queued_ms",
    "spark_jobs",
)


def _totals(metrics) -> dict[str, int]:
    """The vertex's figures summed over its subtasks' latest metrics."""
    return {name: sum(getattr(m, name) for m in metrics) for name in _SUMMED}


def _phases(metrics) -> dict[str, int]:
    """Where the vertex's tasks spent their time, summed over its tasks (``taskmanager.timing``)."""
    spent: dict[str, int] = {}
    for m in metrics:
        for name, ms in m.phases:
            spent[name] = spent.get(name, 0) + ms
    return spent


def _fixed_reason(ejv, ended: bool, listing: str) -> str:
    """``listing``: what its sources saw when they were asked as the job was taken (a source
    inferring one task, chained into a vertex the user set to one; its inputs, if any, are
    broadcast ones, which count no bytes)."""
    if ejv.parallelism is None:
        return (
            "never decided: the job ended before this vertex's inputs were done"
            if ended
            else "not decided yet: waiting for its inputs to finish"
        )
    if ejv.job_vertex.parallelism is not None:
        operator = ejv.job_vertex.operator
        setter = f" on {operator.fixed_by}" if isinstance(operator, ChainedOperator) else ""
        if listing:
            inputs = ", its inputs broadcast only (no bytes counted)" if ejv.inputs else ""
            return (
                f"set by the user{setter}: {ejv.parallelism}; its sources, asked when the "
                f"job was taken, inferred one task{inputs}, so it runs chained: {listing}"
            )
        return f"set by the user{setter}: {ejv.parallelism}"
    return f"fixed before the job started: {ejv.parallelism}"


def empty_status(job_id: str, submitted: ev.JobSubmitted | None, status: JobStatus) -> JobDetails:
    """The details of a job whose scheduling state does not exist yet (or any more)."""
    return JobDetails(
        job_id=job_id,
        name=submitted.name if submitted else "",
        status=status,
        cause="",
        submitted_at=submitted.submitted_at if submitted else 0.0,
        ended_at=None,
        max_running_tasks=0,
        task_overhead_ms=0.0,
        first_deployed_at=None,
        first_task_finished_at=None,
        task_managers=(),
        recoveries=0,
        vertices=(),
        pid=0,
        jobmanager=None,
    )


def process_figures(loop_seconds: array) -> ProcessFigures:
    """This JobManager process's main loop latency per batch of events, and its peak memory."""
    latencies = np.frombuffer(loop_seconds, dtype=np.float64) if len(loop_seconds) else None
    return ProcessFigures(
        loop_batches=len(loop_seconds),
        loop_median_ms=None if latencies is None else round(float(np.median(latencies)) * 1000, 3),
        loop_p99_ms=None
        if latencies is None
        else round(float(np.percentile(latencies, 99)) * 1000, 3),
        peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )
