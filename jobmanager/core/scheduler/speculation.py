"""Speculative execution of stragglers, with Flink's semantics and option names.

Every ``slow-task-detector.check-interval`` a timer fires (an event with the time, so a replay
decides the same): a running task is slow once its vertex has finished at least
``baseline-ratio`` of its tasks and it has run longer than the baseline, the median execution
time of its finished peers times ``baseline-multiplier`` but at least ``baseline-lower-bound``
(Flink's ``ExecutionTimeBasedSlowTaskDetector``; Flink also weighs each task by its input
bytes, Tidal compares plain times). A slow task gets another attempt, up to
``max-concurrent-executions`` at once, in a free slot no regular task waits for, on a TaskManager
that runs none of its attempts and is not blocked (another node where there is one); the
TaskManager that ran the slow attempt takes no speculative attempt for
``block-slow-node-duration``. The first attempt to finish wins: it becomes the task's attempt,
the others are cancelled and their partitions released, so consumers and sink commits see
exactly one. An attempt that fails while another runs is dropped, not failed over; only the
last one's failure counts.

Speculative attempts carry attempt numbers above the task's own, and a restart of the task
goes past all of them, so a report is never taken for another attempt's. ``NoSpeculation`` is
the same interface doing nothing, for jobs with speculation off (the default, as in Flink).
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionState, ExecutionVertex
from jobmanager.core.scheduler.operations import StateOperations
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    BLOCK_SLOW_NODE_DURATION,
    SLOW_TASK_BASELINE_LOWER_BOUND,
    SLOW_TASK_BASELINE_MULTIPLIER,
    SLOW_TASK_BASELINE_RATIO,
    SLOW_TASK_CHECK_INTERVAL,
    SPECULATION_ENABLED,
    SPECULATIVE_MAX_ATTEMPTS,
    Configuration,
)

__all__ = [
    "SPECULATION_TIMER",
    "NoSpeculation",
    "SlowTaskDetector",
    "Speculation",
    "speculation_for",
]

SPECULATION_TIMER = -1  # restart timers count up from 0
S = ExecutionState
_REPORTS = (ev.TaskRunning, ev.TaskFinished, ev.TaskFailed, ev.TaskCanceled)


@dataclass(frozen=True, slots=True)
class SlowTaskDetector:
    check_interval_ms: int
    lower_bound_ms: int
    ratio: float
    multiplier: float

    @staticmethod
    def of(config: Configuration) -> SlowTaskDetector:
        return SlowTaskDetector(
            config[SLOW_TASK_CHECK_INTERVAL.key],
            config[SLOW_TASK_BASELINE_LOWER_BOUND.key],
            config[SLOW_TASK_BASELINE_RATIO.key],
            config[SLOW_TASK_BASELINE_MULTIPLIER.key],
        )

    def baseline_ms(self, finished_ms: list[int], tasks: int) -> int | None:
        """How long a task of a vertex may run before it is slow, given its finished peers'
        execution times (sorted); None while too few finished."""
        if not finished_ms or len(finished_ms) < self.ratio * tasks:
            return None
        n = len(finished_ms)
        median = (
            finished_ms[n // 2] if n % 2 else (finished_ms[n // 2 - 1] + finished_ms[n // 2]) / 2
        )
        return max(self.lower_bound_ms, int(median * self.multiplier))


def speculation_for(state: StateOperations, config: Configuration):
    if config[SPECULATION_ENABLED.key]:
        return Speculation(state, config)
    return NoSpeculation()


class NoSpeculation:
    def start(self) -> None:
        pass

    def owns(self, event) -> bool:
        return False

    def on_running(self, v: ExecutionVertex, event: ev.TaskRunning) -> None:
        pass

    def on_finished(self, v: ExecutionVertex, event: ev.TaskFinished) -> None:
        pass

    def takes_over(self, v: ExecutionVertex) -> bool:
        return False

    def drop(self, v: ExecutionVertex) -> None:
        pass

    def lost(self, task_manager: str) -> None:
        pass

    def abandon(self) -> None:
        pass

    def on_timer(self, now_ms: int) -> None:
        pass

    def next_attempt(self, v: ExecutionVertex) -> int:
        return v.attempt + 1

    def export(self) -> tuple:
        return ()

    def restore(self, image: tuple) -> None:
        pass

    def describe(self) -> tuple:
        return ()


class Speculation:
    """Speculative attempts of one job's tasks. ``state`` is the job's state, reached through
    ``StateOperations`` (its graph, slot pool, commands and dispatch) as failover reaches it."""

    def __init__(self, state: StateOperations, config: Configuration) -> None:
        self.state = state
        self.detector = SlowTaskDetector.of(config)
        self.max_attempts = config[SPECULATIVE_MAX_ATTEMPTS.key]
        self.block_ms = config[BLOCK_SLOW_NODE_DURATION.key]
        self.extra: dict[int, dict[int, object]] = {}  # subtask index -> attempt -> its Slot
        self.highest: dict[int, int] = {}  # subtask index -> highest attempt number used
        self.since: dict[
            tuple[str, int, int], int
        ] = {}  # (vertex, subtask, attempt): running since
        self.finished_ms: dict[str, list[int]] = {}  # job vertex -> finished execution times
        self.blocked: dict[str, int] = {}  # TaskManager -> until
        self.speculated = 0

    # -- the detector's timer ---------------------------------------------------------------

    def start(self) -> None:
        self.state.emit(cmd.StartTimer(SPECULATION_TIMER, self.detector.check_interval_ms))

    def on_timer(self, now_ms: int) -> None:
        """Give slow tasks another attempt, then check again after the interval."""
        state = self.state
        if state.status.value != "RUNNING":
            return
        self.blocked = {tm: until for tm, until in self.blocked.items() if until > now_ms}
        baselines: dict[str, int | None] = {}
        for (name, subtask, attempt), since in sorted(self.since.items()):
            v = state.graph.vertex(name, subtask)
            baseline = self._overdue(v, attempt, now_ms - since, baselines)
            if baseline is not None and 1 + len(self.extra.get(v.index, {})) < self.max_attempts:
                self._speculate(v, now_ms, now_ms - since, baseline)
        state.emit(cmd.StartTimer(SPECULATION_TIMER, self.detector.check_interval_ms))

    def _overdue(self, v, attempt: int, running_ms: int, baselines: dict) -> int | None:
        """The baseline the running ``attempt`` of ``v`` has overrun, or None: not its current
        attempt, not running, slots in demand, or not slow (or no baseline yet)."""
        if v.attempt != attempt or v.state is not S.RUNNING or self.state.slots.demand:
            return None
        baseline = self._baseline(v, baselines)
        if baseline is None or running_ms <= baseline:
            return None
        return baseline

    def _baseline(self, v, baselines: dict[str, int | None]) -> int | None:
        """How long the subtasks of ``v``'s vertex take (None: not known yet), once a check."""
        name = v.name
        if name not in baselines:
            baselines[name] = self.detector.baseline_ms(
                self.finished_ms.get(name, []), len(v.job_vertex.vertices)
            )
        return baselines[name]

    def _speculate(self, v: ExecutionVertex, now_ms: int, ran_ms: int, baseline: int) -> None:
        state = self.state
        attempts = self.extra.setdefault(v.index, {})
        busy = {v.slot.task_manager, *(slot.task_manager for slot in attempts.values())}
        busy_nodes = {state.node_of(tm) for tm in busy}
        self.blocked[v.slot.task_manager] = now_ms + self.block_ms
        slot = state.slots.take_free(
            lambda s: s.task_manager not in busy and s.task_manager not in self.blocked,
            lambda s: state.node_of(s.task_manager) not in busy_nodes,
        )
        if slot is None:
            if not attempts:
                del self.extra[v.index]
            return
        attempt = self.next_attempt(v)
        self.highest[v.index] = attempt
        state.slots.acquire(slot)
        attempts[attempt] = slot
        self.speculated += 1
        state.log.info(
            "speculating",
            vertex=v.name,
            subtask=v.subtask,
            slow_attempt=v.attempt,
            attempt=attempt,
            ran_ms=ran_ms,
            baseline_ms=baseline,
            task_manager=slot.task_manager,
        )
        state.emit(cmd.DeployTask(v.name, v.subtask, attempt, slot.task_manager, slot.index))

    # -- reports ------------------------------------------------------------------------------

    def owns(self, event) -> bool:
        """Whether ``event`` reports on a speculative attempt (then ``on_report`` takes it)."""
        if type(event) not in _REPORTS or not self.extra:
            return False
        ejv = self.state.graph.job_vertices.get(event.vertex)
        if ejv is None or not 0 <= event.subtask < len(ejv.vertices):
            return False
        return event.attempt in self.extra.get(ejv.vertices[event.subtask].index, {})

    def on_report(self, event) -> None:
        v = self.state.graph.job_vertex(event.vertex).vertices[event.subtask]
        kind = type(event)
        if kind is ev.TaskRunning:
            self.since[(v.name, v.subtask, event.attempt)] = event.time_ms
        elif kind is ev.TaskFinished and v.state in (S.DEPLOYING, S.RUNNING):
            self._wins(v, event)
        else:  # failed or cancelled, or finished after the task was done: gone
            self._end(v, event.attempt, cancel=False)
            self.state.dispatch()

    def _wins(self, v: ExecutionVertex, event: ev.TaskFinished) -> None:
        """The speculative attempt finished first: it becomes the task's attempt; the one that
        ran before it and any other speculative one are cancelled."""
        state = self.state
        state.log.info(
            "speculative attempt won",
            vertex=v.name,
            subtask=v.subtask,
            attempt=event.attempt,
            over=v.attempt,
        )
        self._cancel_attempt(v, v.attempt, v.slot)
        state.slots.release(v.slot)
        self.since.pop((v.name, v.subtask, v.attempt), None)
        v.slot = self.extra[v.index].pop(event.attempt)
        v.attempt = event.attempt
        if not self.extra[v.index]:
            del self.extra[v.index]
        self.drop(v)
        state.take(event)

    def on_running(self, v: ExecutionVertex, event: ev.TaskRunning) -> None:
        self.since[(v.name, v.subtask, event.attempt)] = event.time_ms

    def on_finished(self, v: ExecutionVertex, event: ev.TaskFinished) -> None:
        """The task's attempt finished: count its time for the baseline, cancel the others."""
        since = self.since.pop((v.name, v.subtask, event.attempt), None)
        if event.metrics is not None:
            insort(self.finished_ms.setdefault(v.name, []), event.metrics.duration_ms)
        elif since is not None:
            insort(self.finished_ms.setdefault(v.name, []), 0)
        self.drop(v)

    def takes_over(self, v: ExecutionVertex) -> bool:
        """The task's attempt failed: if a speculative attempt runs, it becomes the task's
        attempt and the failure is dropped (True)."""
        attempts = self.extra.get(v.index)
        if not attempts:
            return False
        attempt = min(attempts)
        self.state.slots.release(v.slot)
        self.since.pop((v.name, v.subtask, v.attempt), None)
        v.slot = attempts.pop(attempt)
        v.attempt = attempt
        if not attempts:
            del self.extra[v.index]
        return True

    # -- ending attempts ----------------------------------------------------------------------

    def drop(self, v: ExecutionVertex) -> None:
        """Cancel every speculative attempt of ``v`` (it finished, or is cancelled or reset)."""
        for attempt in sorted(self.extra.get(v.index, {})):
            self._end(v, attempt, cancel=True)

    def _end(self, v: ExecutionVertex, attempt: int, cancel: bool) -> None:
        slot = self.extra[v.index].pop(attempt)
        if not self.extra[v.index]:
            del self.extra[v.index]
        self.since.pop((v.name, v.subtask, attempt), None)
        self.state.slots.release(slot)
        if cancel:
            self._cancel_attempt(v, attempt, slot)
        elif v.produced:
            self._release_files(v, attempt, slot)

    def _cancel_attempt(self, v: ExecutionVertex, attempt: int, slot) -> None:
        if slot.alive:
            self.state.emit(cmd.CancelTask(v.name, v.subtask, attempt, slot.task_manager))
            if v.produced:
                self._release_files(v, attempt, slot)

    def _release_files(self, v: ExecutionVertex, attempt: int, slot) -> None:
        """What the attempt wrote, or may still write before its cancellation lands."""
        if slot.alive:
            self.state.emit(
                cmd.ReleasePartitions(
                    slot.task_manager, tuple(p.id for p in v.produced), (attempt,) * len(v.produced)
                )
            )

    def lost(self, task_manager: str) -> None:
        """Speculative attempts on a TaskManager that is gone are gone (its slots with it)."""
        for v in self._speculating():
            for attempt, slot in list(self.extra[v.index].items()):
                if slot.task_manager == task_manager:
                    del self.extra[v.index][attempt]
                    self.since.pop((v.name, v.subtask, attempt), None)
            if not self.extra[v.index]:
                del self.extra[v.index]

    def abandon(self) -> None:
        """A new JobManager takes the job over: it cancels every speculative attempt and goes on
        with the tasks' own (their TaskManagers' reports reconcile those)."""
        for v in self._speculating():
            self.drop(v)

    def _speculating(self) -> list[ExecutionVertex]:
        return [v for v in self.state.graph.vertices() if v.index in self.extra]

    def next_attempt(self, v: ExecutionVertex) -> int:
        return max(v.attempt, self.highest.get(v.index, 0)) + 1

    # -- snapshots and comparisons ----------------------------------------------------------------

    def export(self) -> tuple:
        return (
            tuple(
                (i, a, s.task_manager, s.index)
                for i, attempts in self.extra.items()
                for a, s in attempts.items()
            ),
            tuple(self.highest.items()),
            tuple(self.since.items()),
            tuple((name, tuple(times)) for name, times in self.finished_ms.items()),
            tuple(self.blocked.items()),
            self.speculated,
        )

    def restore(self, image: tuple) -> None:
        extra, highest, since, finished, blocked, self.speculated = image
        self.extra = {}
        for index, attempt, task_manager, slot in extra:
            self.extra.setdefault(index, {})[attempt] = self.state.slots.slot(task_manager, slot)
        self.highest = dict(highest)
        self.since = {tuple(key): at for key, at in since}
        self.finished_ms = {name: list(times) for name, times in finished}
        self.blocked = dict(blocked)

    def describe(self) -> tuple:
        image = self.export()
        return (tuple(sorted(image[0])), *(tuple(sorted(part)) for part in image[1:5]), image[5])
