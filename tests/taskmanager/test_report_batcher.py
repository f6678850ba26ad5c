"""The batcher sends one batch at a time, in order, and outlives a send that fails."""

import threading
import time

from jobmanager.messages.codec import decode
from jobmanager.messages.events import TaskFinished, TaskRunning
from taskmanager.reports import ReportBatcher


def _wait_for(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_one_batch_in_flight_and_what_came_meanwhile_goes_next_in_order():
    sent, release = [], threading.Event()

    def send(batch: bytes) -> None:
        sent.append(decode(batch))
        if len(sent) == 1:
            release.wait(10)  # the JobManager has not taken the first batch yet

    batcher = ReportBatcher(send)
    batcher(TaskFinished("a", 0, 0))
    _wait_for(lambda: len(sent) == 1)
    for subtask in range(1, 4):
        batcher(TaskRunning("a", subtask, 0, 2))
    time.sleep(0.05)
    assert len(sent) == 1  # held while the first is in flight
    release.set()
    _wait_for(lambda: len(sent) == 2)
    batcher.close()
    assert [e.subtask for e in sent[1]] == [1, 2, 3]


def test_a_failed_send_is_logged_and_the_next_batch_still_goes():
    sent = []

    def send(batch: bytes) -> None:
        if not sent:
            sent.append(None)
            raise RuntimeError("the JobManager is gone")
        sent.append(decode(batch))

    batcher = ReportBatcher(send)
    batcher(TaskFinished("a", 0, 0))
    _wait_for(lambda: len(sent) == 1)
    batcher(TaskFinished("a", 1, 0))
    _wait_for(lambda: len(sent) == 2)
    batcher.close()
    assert [e.subtask for e in sent[1]] == [1]
