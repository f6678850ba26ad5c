"""Slots: at most ``slots`` tasks at once, deploy never waits, every cancel is answered once."""

from __future__ import annotations

import threading

import pytest

from jobmanager.messages.events import TaskCanceled, TaskFinished
from taskmanager.slots import TaskSlots
from tests.taskmanager.harness import RecordingReporter, tdd


class GatedRun:
    """A task body that records it started and waits until the test lets it go (or it is
    cancelled), tracking how many run at once. Like the runner, it returns (and would report)
    TaskCanceled when it noticed its cancellation, and TaskFinished otherwise."""

    def __init__(self) -> None:
        self.started: list[tuple] = []
        self.cancelled: list[tuple] = []
        self.release = threading.Event()
        self.most_at_once = 0
        self.ignore_cancel = False
        self._running = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def __call__(self, deployment, token, queued_s: float = 0.0) -> None:
        key = (deployment.vertex, deployment.subtask, deployment.attempt)
        with self._lock:
            self.started.append(key)
            self._running += 1
            self.most_at_once = max(self.most_at_once, self._running)
            self._changed.notify_all()
        token.on_cancel(self.release.set)
        self.release.wait(10)
        with self._lock:
            self._running -= 1
            if token.cancelled and not self.ignore_cancel:
                self.cancelled.append(key)
                return TaskCanceled(*key)
        return TaskFinished(*key)

    def wait_started(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.started) >= count, 10)


@pytest.fixture
def run():
    gated = GatedRun()
    yield gated
    gated.release.set()


def test_no_more_tasks_run_at_once_than_there_are_slots(run):
    slots = TaskSlots(2, run, RecordingReporter())
    for subtask in range(5):
        slots.submit(tdd("v", subtask=subtask))
    run.wait_started(2)
    assert len(run.started) == 2
    run.release.set()
    assert slots.wait_idle(10)
    assert len(run.started) == 5 and run.most_at_once == 2
    slots.close()


def test_a_queued_task_is_cancelled_at_once_and_never_runs(run):
    reporter = RecordingReporter()
    slots = TaskSlots(1, run, reporter)
    slots.submit(tdd("v", subtask=0))
    slots.submit(tdd("v", subtask=1))
    run.wait_started(1)

    slots.cancel(("v", 1, 0))

    assert reporter.events == [TaskCanceled("v", 1, 0)]
    run.release.set()
    assert slots.wait_idle(10)
    assert run.started == [("v", 0, 0)]
    slots.close()


def test_a_running_task_is_cancelled_through_its_token(run):
    reporter = RecordingReporter()
    slots = TaskSlots(1, run, reporter)
    slots.submit(tdd("v"))
    run.wait_started(1)
    assert slots.running() == [("v", 0, 0)]

    slots.cancel(("v", 0, 0))

    assert slots.wait_idle(10)
    assert run.cancelled == [("v", 0, 0)]
    assert reporter.events == []  # the runner reports a running task's end itself
    slots.close()


def test_a_cancel_that_comes_after_the_task_finished_its_work_is_still_answered(run):
    reporter = RecordingReporter()
    run.ignore_cancel = True  # the task had written everything when the cancel came
    slots = TaskSlots(1, run, reporter)
    slots.submit(tdd("v"))
    run.wait_started(1)

    slots.cancel(("v", 0, 0))

    assert slots.wait_idle(10)
    assert reporter.events == [TaskCanceled("v", 0, 0)]
    slots.close()


def test_cancelling_an_unknown_task_is_answered_at_once(run):
    reporter = RecordingReporter()
    slots = TaskSlots(1, run, reporter)
    slots.cancel(("never", 3, 1))
    assert reporter.events == [TaskCanceled("never", 3, 1)]
    slots.close()


def test_cancel_all_reaches_queued_and_running_tasks(run):
    reporter = RecordingReporter()
    slots = TaskSlots(1, run, reporter)
    slots.submit(tdd("v", subtask=0))
    slots.submit(tdd("v", subtask=1))
    run.wait_started(1)

    slots.cancel_all()

    assert slots.wait_idle(10)
    assert run.cancelled == [("v", 0, 0)]
    assert reporter.events == [TaskCanceled("v", 1, 0)]
    slots.close()


def test_the_same_attempt_deployed_twice_runs_once(run):
    slots = TaskSlots(2, run, RecordingReporter())
    slots.submit(tdd("v"))
    slots.submit(tdd("v"))
    run.wait_started(1)
    run.release.set()
    assert slots.wait_idle(10)
    assert run.started == [("v", 0, 0)]
    slots.close()
