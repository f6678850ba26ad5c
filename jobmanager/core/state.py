"""The JobManager's state, and its one mutator: ``handle(event) -> Step``.

The state composes the execution graph, its pipelined regions, a scheduling strategy, the
region failover and partition release strategies, the restart back-off and the slot pool. It
knows nothing of Ray, clocks or disks: the shell that holds it appends each event to the job's
log, calls ``handle``, appends the decisions the step made to the log after the event, and
carries out the step's commands. Replaying the log (``apply``, which decides nothing) into a
fresh state gives the same state (``describe`` compares them).
"""

from __future__ import annotations

from typing import Callable, Sequence

import structlog

from jobmanager.core.admission import (
    check_all_blocking,
    slot_limit,
    uses_adaptive_scheduler,
    validate_job,
)
from jobmanager.core.deploying import Deploying
from jobmanager.core.description import describe
from jobmanager.core.executiongraph import (
    ExecutionGraph,
    ExecutionState,
    ExecutionVertex,
    PartitionState,
)
from jobmanager.core.executiongraph.result_bytes import report_problem
from jobmanager.core.failing import Failing
from jobmanager.core.losing import Losing
from jobmanager.core.probe import NoProbe, Probe, ProbeListener
from jobmanager.core.reconcile import Reconciling
from jobmanager.core.scheduler.adaptive.scheduler import AdaptiveBatchScheduler
from jobmanager.core.scheduler.backoff import make_restart_backoff
from jobmanager.core.scheduler.failover import RestartPipelinedRegionFailoverStrategy
from jobmanager.core.scheduler.recoverable import non_recoverable_cause
from jobmanager.core.scheduler.regions import PipelinedRegions
from jobmanager.core.scheduler.release import RegionPartitionGroupReleaseStrategy
from jobmanager.core.scheduler.restarts import PendingRestarts
from jobmanager.core.scheduler.slots import SlotPool, SlotRequest
from jobmanager.core.scheduler.speculation import SPECULATION_TIMER, speculation_for
from jobmanager.core.scheduler.strategy import (
    PipelinedRegionSchedulingStrategy,
    VertexwiseSchedulingStrategy,
)
from jobmanager.core.step import Step
from jobmanager.errors import NoResourceAvailableError
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.messages.losses import TaskManagerLoss
from jobmanager.model.config import (
    MAX_PARALLELISM,
    NON_RECOVERABLE_EXCEPTIONS,
    NUMBER_OF_TASK_SLOTS,
    PARALLELISM_DEFAULT,
    SLOT_PREFETCH,
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph

__all__ = [
    "JobManagerState",
    "JobStatus",
    "Probe",
    "Step",
    "uses_adaptive_scheduler",
    "validate_job",
]

S = ExecutionState


class JobManagerState(Deploying, Failing, Losing, Reconciling):
    def __init__(
        self,
        job_graph: JobGraph,
        config: Configuration | None = None,
        job_id: str = "job",
        probe: Probe | None = None,
        cluster_slots: int | None = None,
        inferred: Sequence[ev.SourceParallelismInferred] = (),
    ) -> None:
        self.probe = probe or NoProbe()
        self.probe.mark("initializing")
        self.config = config or Configuration()
        self.job_id = job_id
        self.log = structlog.get_logger("tidal.jobmanager").bind(job=job_id)
        self.adaptive = uses_adaptive_scheduler(job_graph, self.config)
        limit = slot_limit(self.config, cluster_slots)
        self.graph = ExecutionGraph(
            job_graph,
            dynamic=self.adaptive,
            default_parallelism=self.config[PARALLELISM_DEFAULT.key],
            default_max_parallelism=self.config[MAX_PARALLELISM.key],
        )
        self.regions = PipelinedRegions(self.graph)
        self.release = RegionPartitionGroupReleaseStrategy()
        self.strategy: PipelinedRegionSchedulingStrategy | VertexwiseSchedulingStrategy
        self.growth: AdaptiveBatchScheduler | None = None
        if self.adaptive:
            check_all_blocking(job_graph)
            self.strategy = VertexwiseSchedulingStrategy(self)
            self.growth = AdaptiveBatchScheduler(
                self.graph,
                self.config,
                lambda command: self.emit(command),
                limit,
                inferred,
            )
        else:
            self.strategy = PipelinedRegionSchedulingStrategy(self, self.regions)
        self.graph.listeners += [
            ProbeListener(self.probe, "execution_graph_built"),
            self.regions,
            ProbeListener(self.probe, "regions_built"),
            self.release,
            self.strategy,
        ]
        self.failover = RestartPipelinedRegionFailoverStrategy()
        self.backoff = make_restart_backoff(self.config, seed=sum(map(ord, job_id)))
        self.slots = SlotPool(
            self.config[NUMBER_OF_TASK_SLOTS.key],
            limit,
            self.config[SLOT_PREFETCH.key],
        )
        self.speculation = speculation_for(self, self.config)
        self.admitted = {a.vertex: a for a in inferred}  # sources asked when the job was taken
        self.task_managers: dict[str, ev.TaskManagerRegistered] = {}
        self.departed: dict[str, ev.TaskManagerRegistered] = {}  # see core.losing
        self.losses: list[TaskManagerLoss] = []
        self.status = JobStatus.CREATED
        self.failure_cause = ""
        self.ended: tuple[JobStatus, str] | None = None
        self.archived: ev.JobArchived | None = None
        self.recoveries = 0
        self.events_applied = 0
        self._reconciling = False
        self._out: list[object] = []
        self._requests: dict[int, SlotRequest] = {}
        self._active = 0
        self.restarts = PendingRestarts()
        self._handlers: dict[type, Callable] = {
            ev.JobStarted: self._on_job_started,
            ev.TaskManagerRegistered: self._on_task_manager_registered,
            ev.TaskManagerRequestFailed: self._on_task_manager_request_failed,
            ev.TaskManagerLost: self._on_task_manager_lost,
            ev.TaskRunning: self._on_task_running,
            ev.TaskFinished: self._on_task_finished,
            ev.TaskFailed: self._on_task_failed,
            ev.TaskCanceled: self._on_task_canceled,
            ev.TimerFired: self._on_timer_fired,
            ev.JobCancelRequested: self._on_cancel_requested,
            ev.VertexParallelismDecided: self._on_parallelism_decided,
            ev.JoinChained: self._on_join_chained,
            ev.SourceParallelismInferred: self._on_source_parallelism_inferred,
            ev.SourceInferenceFailed: self._on_source_inference_failed,
            ev.JobManagerRecovered: self._on_recovered,
            ev.JobEnded: self._on_job_ended,
            ev.JobArchived: self._on_job_archived,
        }

    # -- the one way in ---------------------------------------------------------------------

    def source_listing(self, name: str) -> tuple[str, tuple[str, ...]]:
        """What the sources of ``name`` saw when they were asked, and the keys of the splits
        they listed; empty where they were never asked (a parallelism set by the user)."""
        if self.growth is not None and name in self.growth.inferred_detail:
            return self.growth.inferred_detail[name], self.growth.split_keys.get(name, ())
        answer = self.admitted.get(name)  # the job runs without the adaptive scheduler
        return (answer.detail, answer.split_keys) if answer is not None else ("", ())

    def handle(self, event: object) -> Step:
        """Apply one event as it happens, then decide what it made decidable (parallelisms,
        from the bytes producers reported; joins chained into their producer, once the other
        side finished small) and apply those decisions too. The step's events are
        the decisions, for the shell to record after ``event``; a replay applies them from the
        log (``apply``) and never decides again."""
        commands = self.apply(event)
        decided: list[ev.VertexParallelismDecided | ev.JoinChained] = []
        while self.growth is not None and self.status is JobStatus.RUNNING:
            done = {d.vertex for d in decided if type(d) is ev.VertexParallelismDecided}
            names = [name for name in self.growth.deciding() if name not in done]
            batch = self.growth.chains_to_decide()
            batch += [self.growth.decision_for(name) for name in names]
            if not batch:
                break
            for decision in batch:
                decided.append(decision)
                commands.extend(self.apply(decision))
        return Step(tuple(decided), tuple(commands))

    def apply(self, event: object) -> list[object]:
        """Apply one event, deciding nothing; return the commands it leads to. A replay applies
        a log this way: what the live run decided is in the log, after the event it followed."""
        if type(event) not in self._handlers:
            raise TypeError(f"not an event: {event!r}")
        if self.speculation.owns(event):  # about a speculative attempt
            self.speculation.on_report(event)
        else:
            self.take(event)
        self.events_applied += 1
        out, self._out = self._out, []
        return out

    # -- StateOperations, for speculation, failover and reconciliation ------------------------

    def take(self, event: object) -> None:
        """Handle ``event`` as part of the one being applied: a report that a reconciliation
        found on a TaskManager, a TaskManager it found gone, an attempt that won a race."""
        self._handlers[type(event)](event)

    def emit(self, *commands: object) -> None:
        """Add commands to the answer of the event being applied."""
        self._out.extend(commands)

    # -- SchedulerOperations, for the strategies --------------------------------------------

    def allocate_slots_and_deploy(self, vertices: Sequence[ExecutionVertex]) -> None:
        for v in vertices:
            self.graph.transitions.move(v, S.SCHEDULED)
        try:
            request = self.slots.submit(vertices)
        except NoResourceAvailableError as error:
            for v in vertices:
                self.graph.transitions.move(v, S.FAILED)
            self._fail_job(str(error))
            return
        for v in vertices:
            self._requests[v.index] = request

    def bytes_per_task(self, vertex: ExecutionVertex) -> int:
        return self.growth.bytes_per_task(vertex.job_vertex) if self.growth is not None else 0

    # -- event handlers -----------------------------------------------------------------------

    def _on_job_started(self, event: ev.JobStarted) -> None:
        if self.status is not JobStatus.CREATED:
            return
        self.status = JobStatus.RUNNING
        self.log.info("job started", adaptive=self.adaptive)
        if self.growth is not None:
            self._grow()
        else:
            self.graph.initialize(list(self.graph.job_vertices.values()))
        self.strategy.start_scheduling()
        self.speculation.start()
        self.dispatch()
        self.request_ahead()

    def _on_task_manager_registered(self, event: ev.TaskManagerRegistered) -> None:
        self.task_managers[event.task_manager] = event
        self.slots.register(event.task_manager, event.slots)
        self.dispatch()

    def _on_task_manager_request_failed(self, event: ev.TaskManagerRequestFailed) -> None:
        """Slots that will not come, as Flink's NoResourceAvailableException: a failure the
        restart strategy counts. While it allows, the slots are asked for again after its
        back-off (a restart of no subtask, whose timer ends in a dispatch); then the job fails."""
        self.slots.request_failed(event.slots)
        self.log.warning("task managers unavailable", slots=event.slots, reason=event.reason)
        if self.status is not JobStatus.RUNNING or not self.slots.slots_to_request():
            return
        cause = f"no TaskManager of {event.slots} slots: {event.reason}"
        self.failure_cause = self.failure_cause or cause
        self.backoff.notify_failure(event.time_ms)
        if not self.backoff.can_restart():
            self._fail_job(f"{cause}; no restart left ({self.backoff})")
            return
        self.emit(self.restarts.add((), self.backoff.backoff_ms(), 0))

    def _on_task_running(self, event: ev.TaskRunning) -> None:
        v = self._current(event)
        if v is not None and v.state is S.DEPLOYING:
            self.graph.transitions.move(v, S.RUNNING)
            self.speculation.on_running(v, event)

    def _on_task_finished(self, event: ev.TaskFinished) -> None:
        v = self._ending(event)
        if v is None:
            return
        problem = report_problem(v, event.produced)
        if problem:
            self._on_task_failed(ev.TaskFailed(v.name, v.subtask, v.attempt, problem, 0))
            return
        self.speculation.on_finished(v, event)
        location = v.slot.task_manager
        self.free_slot(v)
        self.graph.transitions.move(v, S.FINISHED)
        self._record_produced(v, location, event.produced)
        ejv = v.job_vertex
        ejv.unfinished -= 1
        if ejv.unfinished == 0:
            self.graph.unfinished_job_vertices -= 1
        self.release_partitions(self.release.vertex_finished(v))
        if self.status is JobStatus.RUNNING:
            self.strategy.on_vertex_finished(v)
            if ejv.unfinished == 0 and self.growth is not None:
                self._grow()
            if self.graph.is_finished:
                self._terminate(JobStatus.FINISHED, "")
        else:
            self.maybe_terminate()
        self.dispatch()

    def _on_task_failed(self, event: ev.TaskFailed) -> None:
        v = self._ending(event)
        if v is None:
            return
        fatal = self._fatal(event)
        failed_attempt = v.attempt
        if fatal is None and event.lost_partition is None and self.speculation.takes_over(v):
            self.log.info(
                "task attempt failed; its speculative attempt goes on",
                vertex=v.name,
                subtask=v.subtask,
                attempt=failed_attempt,
                now=v.attempt,
            )
            return
        self.free_slot(v)
        self.graph.transitions.move(v, S.FAILED)
        cause = f"{v.label} attempt {v.attempt} failed: {event.error}"
        failed = [v]
        if event.lost_partition is not None and self._lose_input(event.lost_partition):
            cause += f" (input partition {event.lost_partition} lost)"
        self.log.warning("task failed", vertex=v.name, subtask=v.subtask, attempt=v.attempt)
        if fatal is not None and self.status is JobStatus.RUNNING:
            self._fail_job(f"{cause}; not retried: {fatal} is an error no restart can fix")
        else:
            self.fail_over(failed, cause, event.time_ms)
        self.maybe_terminate()
        self.dispatch()

    def _on_task_canceled(self, event: ev.TaskCanceled) -> None:
        v = self._current(event)
        if v is not None and v.state is S.CANCELING:
            self.canceled(v)
            self.dispatch()

    def _on_timer_fired(self, event: ev.TimerFired) -> None:
        if event.token == SPECULATION_TIMER:
            self.speculation.on_timer(event.time_ms)
            return
        vertices = self.restarts.take(event.token)
        if vertices is None or self.status is not JobStatus.RUNNING:
            return
        for v in vertices:
            self._reset(v)
        self.log.info("restarting", subtasks=len(vertices))
        self.strategy.restart_tasks(vertices)
        self.dispatch()

    def _on_cancel_requested(self, event: ev.JobCancelRequested) -> None:
        if self.status.is_terminal or self.status is JobStatus.CANCELLING:
            return
        self.failure_cause = event.reason
        self._wind_down(JobStatus.CANCELLING)

    def _on_parallelism_decided(self, event: ev.VertexParallelismDecided) -> None:
        if self.status is not JobStatus.RUNNING or self.growth is None:
            return
        if self.growth.on_decided(event):
            self.log.info(
                "parallelism decided",
                vertex=event.vertex,
                parallelism=event.parallelism,
                why=event.explanation.text,
            )
        self._grow()
        self.dispatch()

    def _on_join_chained(self, event: ev.JoinChained) -> None:
        if self.status is not JobStatus.RUNNING or self.growth is None:
            return
        self.growth.on_chained(event)
        self.log.info(
            "join chained into its producer", vertex=event.vertex, why=event.decision.text
        )
        self._grow()
        self.dispatch()

    def _on_source_parallelism_inferred(self, event: ev.SourceParallelismInferred) -> None:
        if self.status is not JobStatus.RUNNING or self.growth is None:
            return
        self.growth.on_inferred(event)
        self._grow()
        self.dispatch()

    def _on_source_inference_failed(self, event: ev.SourceInferenceFailed) -> None:
        if self.status is JobStatus.RUNNING:
            self._fail_job(
                f"vertex {event.vertex!r}: its sources could not say how much "
                f"data they hold: {event.error}"
            )

    def _on_job_ended(self, event: ev.JobEnded) -> None:
        self.ended = (event.status, event.cause)

    def _on_job_archived(self, event: ev.JobArchived) -> None:
        self.archived = event

    def _grow(self) -> None:
        """Initialise what the adaptive scheduler can now, and let the strategy see it."""
        ready = self.growth.progress()
        if ready:
            self.probe.mark("initializing")
            self.graph.initialize(ready, self.growth.input_infos_of(ready))
            self.strategy.schedule_newly_added()

    def _ending(self, event: ev.TaskFinished | ev.TaskFailed) -> ExecutionVertex | None:
        """The subtask a report of its end is about, if it still runs (one being canceled is
        canceled now); None if there is nothing more to do."""
        v = self._current(event)
        if v is None or v.state.is_terminal:
            return None
        if v.state is S.CANCELING:
            self.canceled(v)
            self.dispatch()
            return None
        return v

    def _record_produced(self, v: ExecutionVertex, location: str, produced) -> None:
        files = {report.result: (report.file_size, report.file_checksum) for report in produced}
        for partition in v.produced:
            partition.mark_finished(location, *files.get(partition.result.id, (0, 0)))
        for report in produced:
            self.graph.results[report.result].produced.record(v.subtask, report)
            if self.growth is not None:
                self.growth.record_produced(v.subtask, report)

    def _fatal(self, event: ev.TaskFailed) -> str | None:
        """The error no restart can fix that failed the task, if any (a lost input is not)."""
        if event.lost_partition is not None:
            return None
        return non_recoverable_cause(event.error_types, self.config[NON_RECOVERABLE_EXCEPTIONS.key])

    def _lose_input(self, lost_partition) -> bool:
        """Mark a finished input partition a task could not read lost; False if it was not."""
        lost = self.graph.results[lost_partition.result].partitions[lost_partition.index]
        if not lost.is_finished:
            return False
        lost.mark_lost()
        return True

    def _current(self, event) -> ExecutionVertex | None:
        """The subtask an event is about, or None if the event is about an older attempt."""
        ejv = self.graph.job_vertices.get(event.vertex)
        if ejv is None or not 0 <= event.subtask < len(ejv.vertices):
            self.log.warning("event for an unknown task", event=event)
            return None
        v = ejv.vertices[event.subtask]
        return v if v.attempt == event.attempt else None

    # -- inspection ---------------------------------------------------------------------------------

    def describe(self) -> tuple:
        """Everything that makes this state what it is, as plain values, for comparing a replay
        with the live run (``jobmanager.core.description``)."""
        return describe(self)
