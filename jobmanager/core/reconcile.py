"""Reconciling a replayed state with what the TaskManagers say, after a JobManager died.

The replayed state is the dead JobManager's state as of its last logged event. What happened
since lives only on the TaskManagers: tasks that ended (their final reports may never have
reached the log), tasks still running, partitions they still hold or lost. A new JobManager
asks every TaskManager leased to the job and feeds the answers to the core as one event
(``JobManagerRecovered``); this module reads that event against the state and says what to do.
It decides nothing the live run had decided: parallelisms, ranges and finished tasks stay.

The rules, per subtask the state has in flight (deploying, running or cancelling) on a
TaskManager that answered:

- the TaskManager has its final report: apply the report, as if it had just arrived;
- the TaskManager still runs it: leave it running (it reports to the new JobManager);
- the TaskManager never heard of it (the deployment died with the JobManager): it is lost in
  flight, and runs again without counting as a failure (or, if it was being cancelled, it is).

A TaskManager the job had that did not answer is lost, as if its heartbeat had stopped. A
partition the state has as available on a TaskManager that does not hold it is lost, and its
producer reruns through region failover. A partition a TaskManager holds that the state does
not expect there (an older attempt, a task the state reset) is released.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import (
    ExecutionGraph,
    ExecutionState,
    ExecutionVertex,
    IntermediateResultPartition,
    PartitionState,
)
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from shuffle.ids import PartitionId

__all__ = ["Reconciliation", "Reconciling", "plan_reconciliation"]

_IN_FLIGHT = (ExecutionState.DEPLOYING, ExecutionState.RUNNING, ExecutionState.CANCELING)


@dataclass
class Reconciliation:
    lost_task_managers: list[str] = field(default_factory=list)
    new_task_managers: list[ev.TaskManagerReport] = field(default_factory=list)
    ended: list[object] = field(default_factory=list)
    cancel_again: list[ExecutionVertex] = field(default_factory=list)
    canceled: list[ExecutionVertex] = field(default_factory=list)
    lost_in_flight: list[ExecutionVertex] = field(default_factory=list)
    missing: list[IntermediateResultPartition] = field(default_factory=list)
    stale: dict[str, tuple[list[PartitionId], list[int]]] = field(default_factory=dict)


def plan_reconciliation(
    graph: ExecutionGraph, known_task_managers, event: ev.JobManagerRecovered
) -> Reconciliation:
    plan = Reconciliation()
    answered = {report.task_manager: report for report in event.task_managers}
    plan.lost_task_managers = [t for t in known_task_managers if t not in answered]
    plan.new_task_managers = [
        r for r in event.task_managers if r.task_manager not in known_task_managers
    ]
    expected: dict[str, set[tuple[PartitionId, int]]] = {t: set() for t in answered}
    _plan_in_flight_subtasks(graph, answered, plan, expected)
    held = {t: set(r.partitions) for t, r in answered.items()}
    _plan_available_partitions(graph, held, plan, expected)
    plan.stale = _stale_partitions(held, expected)
    return plan


def _plan_in_flight_subtasks(
    graph: ExecutionGraph,
    answered: dict[str, ev.TaskManagerReport],
    plan: Reconciliation,
    expected: dict[str, set[tuple[PartitionId, int]]],
) -> None:
    """Only a TaskManager that answered can say what became of a subtask the state has in
    flight there; one that did not answer is lost as a whole, its subtasks with it."""
    running = {t: set(r.running) for t, r in answered.items()}
    ended = {t: {(e.vertex, e.subtask, e.attempt): e for e in r.ended} for t, r in answered.items()}
    for v in graph.vertices():
        if v.state in _IN_FLIGHT and v.slot.task_manager in answered:
            where = v.slot.task_manager
            _plan_in_flight_subtask(v, running[where], ended[where], plan, expected[where])


def _plan_in_flight_subtask(
    v: ExecutionVertex,
    running: set,
    ended: dict,
    plan: Reconciliation,
    expected: set[tuple[PartitionId, int]],
) -> None:
    """One in-flight subtask against its TaskManager's answer. A subtask that ended or still
    runs keeps the partitions it produces, so they are expected on its TaskManager and not
    released as stale."""
    key = (v.name, v.subtask, v.attempt)
    report = ended.get(key)
    if report is not None:
        plan.ended.append(report)
        expected.update(_partitions_of_attempt(v))
    elif key in running:
        expected.update(_partitions_of_attempt(v))
        if v.state is ExecutionState.CANCELING:
            plan.cancel_again.append(v)
    elif v.state is ExecutionState.CANCELING:
        plan.canceled.append(v)
    else:
        plan.lost_in_flight.append(v)


def _partitions_of_attempt(v: ExecutionVertex) -> list[tuple[PartitionId, int]]:
    """A TaskManager files partitions by attempt, so a rerun's output is told from an older
    attempt's."""
    return [(p.id, v.attempt) for p in v.produced]


def _plan_available_partitions(
    graph: ExecutionGraph,
    held: dict[str, set[tuple[PartitionId, int]]],
    plan: Reconciliation,
    expected: dict[str, set[tuple[PartitionId, int]]],
) -> None:
    """A partition the state counts on must still be where the state says: if its
    TaskManager answered without it, its producer has to run again."""
    for result in graph.results.values():
        for p in result.partitions:
            if p.state is not PartitionState.AVAILABLE or p.location not in held:
                continue
            mine = (p.id, p.producer.attempt)
            if mine in held[p.location]:
                expected[p.location].add(mine)
            else:
                plan.missing.append(p)


def _stale_partitions(
    held: dict[str, set[tuple[PartitionId, int]]],
    expected: dict[str, set[tuple[PartitionId, int]]],
) -> dict[str, tuple[list[PartitionId], list[int]]]:
    """What each TaskManager holds that nothing in the state will read: it would only take up
    its disk, so it is released."""
    stale_by_task_manager = {}
    for task_manager, partitions in held.items():
        stale = sorted(partitions - expected[task_manager], key=lambda x: (x[0].result, x[0].index))
        if stale:
            stale_by_task_manager[task_manager] = ([pid for pid, _ in stale], [a for _, a in stale])
    return stale_by_task_manager


class Reconciling:
    """The part of ``JobManagerState`` that handles ``JobManagerRecovered``: it applies the
    plan above with the state's own steps (a lost TaskManager, a registered one, a failover, a
    report arriving), so a take-over goes the ways the live run would have gone."""

    def _on_recovered(self, event: ev.JobManagerRecovered) -> None:
        """A new JobManager took over: line the state up with what the TaskManagers say (see
        ``jobmanager.core.reconcile``), then carry on."""
        self.recoveries += 1
        self.speculation.abandon()
        plan = plan_reconciliation(self.graph, self.task_managers, event)
        self.log.info(
            "reconciling",
            task_managers=len(event.task_managers),
            lost=len(plan.lost_task_managers),
            ended=len(plan.ended),
            lost_in_flight=len(plan.lost_in_flight),
            missing=len(plan.missing),
        )
        was_terminal = self.status.is_terminal
        self._reconciling = True  # deploy nothing until every fact is in
        self.slots.request_failed(self.slots.requested_slots)  # those requests died with it
        self._reissue_pending_work()
        self._reconcile_task_managers(plan, event.time_ms)
        self._fail_over_lost(plan, event.time_ms)
        for report in plan.ended:
            self.take(report)
        self._clean_up(plan)
        if was_terminal and self.ended is None:
            self.emit(cmd.JobTerminated(self.status, self.failure_cause))
        self._reconciling = False
        self.maybe_terminate()
        self.dispatch()

    def _reconcile_task_managers(self, plan, time_ms: int) -> None:
        """The TaskManagers that did not answer are lost; those new to the state register."""
        for task_manager in plan.lost_task_managers:
            self.take(
                ev.TaskManagerLost(
                    task_manager, "it did not answer the JobManager that took over", time_ms
                )
            )
        for report in plan.new_task_managers:
            self.take(
                ev.TaskManagerRegistered(
                    report.task_manager, report.slots, report.node, report.shuffle_root
                )
            )

    def _fail_over_lost(self, plan, time_ms: int) -> None:
        """Restart the subtasks lost in flight (not a failure of the job) and the producers of
        partitions gone from their TaskManagers. Each planned step is checked against the
        state again: an earlier one may have moved the subtask on (a failover cancelling it,
        say)."""
        lost = []
        for v in plan.lost_in_flight + plan.canceled:
            if v.state is ExecutionState.CANCELING:
                self.canceled(v)
            elif v.state in (ExecutionState.DEPLOYING, ExecutionState.RUNNING):
                self.free_slot(v)
                self.graph.transitions.move(v, ExecutionState.FAILED)
                lost.append(v)
        self.fail_over(lost, "lost in flight when its JobManager died", time_ms, counted=False)
        missing = [p for p in plan.missing if p.state is PartitionState.AVAILABLE]
        for p in missing:
            p.mark_lost()
        if missing:
            self.fail_over(
                [p.producer for p in missing],
                f"partition {missing[0].id} is gone from {missing[0].location}",
                time_ms,
            )

    def _clean_up(self, plan) -> None:
        """Cancel again what the old JobManager was canceling; release stale partitions."""
        for v in plan.cancel_again:
            if v.state is ExecutionState.CANCELING:
                self.emit(cmd.CancelTask(v.name, v.subtask, v.attempt, v.slot.task_manager))
        for task_manager, (partitions, attempts) in plan.stale.items():
            self.emit(cmd.ReleasePartitions(task_manager, tuple(partitions), tuple(attempts)))

    def _reissue_pending_work(self) -> None:
        """What the JobManager that died was waiting out, asked for again: the source
        inferences it had not logged, the restart timers it had started. The decisions it had
        not logged are made by ``handle`` once this event is applied; nothing it logged is
        decided again."""
        if self.status is not JobStatus.RUNNING:
            return
        if self.growth is not None:
            self.emit(*self.growth.pending_inferences())
        self.emit(*self.restarts.started_timers())
