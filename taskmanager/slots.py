"""TaskSlots: a TaskManager's slots, each running one task at a time on its own thread.

Deploying never waits: a task beyond the free slots queues until one frees. Every cancel is
answered with one TaskCanceled, so the JobManager, which asked, always hears back: a queued task
is dropped and reported at once; a running task's token is set and the task reports when it
stops (or, if it had already finished its work, the slot reports for it); a task this
TaskManager does not know (ended, or never deployed here) is reported at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import Enum

import structlog

from jobmanager.messages.deployment import TaskDeploymentDescriptor
from jobmanager.messages.events import Event, TaskCanceled, TaskFailed
from taskmanager.cancellation import CancelToken
from taskmanager.failures import describe_failure

__all__ = ["TaskKey", "TaskSlots", "task_key"]

TaskKey = tuple[str, int, int]  # vertex, subtask, attempt
RunTask = Callable[[TaskDeploymentDescriptor, CancelToken, float], Event]

_log = structlog.get_logger("tidal.taskmanager")


def task_key(tdd: TaskDeploymentDescriptor) -> TaskKey:
    return (tdd.vertex, tdd.subtask, tdd.attempt)


class _State(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    CANCELED = "canceled"  # before it started; already reported


class _Task:
    __slots__ = ("tdd", "token", "state", "cancel_requested", "done", "submitted_at")

    def __init__(self, tdd: TaskDeploymentDescriptor) -> None:
        self.tdd = tdd
        self.submitted_at = time.monotonic()
        self.token = CancelToken()
        self.state = _State.QUEUED
        self.cancel_requested = False  # set under the lock, so the slot sees it when it ends
        self.done = threading.Event()


class TaskSlots:
    """``run(tdd, token, queued_s)`` runs a task that waited ``queued_s`` for its slot,
    reports its end and returns that report; ``report``
    carries the TaskCanceled answers the tasks do not give themselves. Thread-safe."""

    def __init__(self, slots: int, run: RunTask, report: Callable[[Event], None]) -> None:
        if slots < 1:
            raise ValueError(f"a TaskManager needs at least one slot, not {slots}")
        self.slots = slots
        self._run = run
        self._report = report
        self._tasks: dict[TaskKey, _Task] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(slots, thread_name_prefix="tidal-slot")
        self._closed = False

    def submit(self, tdd: TaskDeploymentDescriptor) -> None:
        key = task_key(tdd)
        with self._lock:
            if self._closed:
                raise RuntimeError(f"task {key} deployed to a TaskManager that is shut down")
            if key in self._tasks:
                _log.warning(
                    "task deployed twice; the second deployment is ignored",
                    vertex=key[0],
                    subtask=key[1],
                    attempt=key[2],
                )
                return
            task = self._tasks[key] = _Task(tdd)
        self._pool.submit(self._slot, key, task)

    def cancel(self, key: TaskKey) -> None:
        with self._lock:
            task = self._tasks.get(key)
            if task is not None and task.state is _State.QUEUED:
                task.state = _State.CANCELED
                del self._tasks[key]
                task.done.set()
            running = task is not None and task.state is _State.RUNNING
            if running:
                task.cancel_requested = True
        if running:
            task.token.cancel()
        else:
            self._report(TaskCanceled(*key))

    def cancel_all(self) -> None:
        with self._lock:
            keys = list(self._tasks)
        for key in keys:
            self.cancel(key)

    def active(self) -> list[TaskKey]:
        """Tasks queued or running."""
        with self._lock:
            return list(self._tasks)

    def running(self) -> list[TaskKey]:
        with self._lock:
            return [key for key, task in self._tasks.items() if task.state is _State.RUNNING]

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every known task to end; True if they all did."""
        with self._lock:
            pending = [task.done for task in self._tasks.values()]
        deadline = time.monotonic() + timeout
        return all(done.wait(max(0.0, deadline - time.monotonic())) for done in pending)

    def close(self) -> None:
        """Stop taking tasks; threads of tasks still running end when those tasks do."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _slot(self, key: TaskKey, task: _Task) -> None:
        with self._lock:
            if task.state is _State.CANCELED:
                return
            task.state = _State.RUNNING
        ended = None
        try:
            ended = self._run(task.tdd, task.token, time.monotonic() - task.submitted_at)
        except Exception as error:  # a bug in the runtime, not the task's code: still its end
            _log.exception(
                "a task escaped its runner", vertex=key[0], subtask=key[1], attempt=key[2]
            )
            ended = TaskFailed(
                *key,
                f"the TaskManager failed running it: {describe_failure(error)}",
                time.time_ns() // 1_000_000,
            )
            if not task.cancel_requested:
                self._report(ended)
        finally:
            with self._lock:
                self._tasks.pop(key, None)
                unanswered = task.cancel_requested and not isinstance(ended, TaskCanceled)
            if unanswered:
                self._report(TaskCanceled(*key))
            task.done.set()
