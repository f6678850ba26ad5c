"""Reports to the JobManager, sent in batches.

A no-op task finishes in about a millisecond; a Ray call costs about as much CPU on each side.
So reports made within ``linger_s`` of each other travel in one call, and a task that started
and ended within one batch is reported ended only (the scheduler takes a task straight from
deployed to finished): a thousand short tasks cost a few hundred calls and half the events.

Reports keep their order, so one batch is in flight at a time: ``send`` returns once the
JobManager has taken the batch, and what came meanwhile goes in the next. The JobManager is a
threaded actor, and Ray keeps no order between one caller's calls to such an actor, so two
batches in flight could reach its mailbox the wrong way round (in a one-slot TaskManager, the
next task seen running before the one before it was seen finished).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from jobmanager.messages.codec import encode
from jobmanager.messages.events import Event, TaskRunning

__all__ = ["ReportBatcher"]

_log = structlog.get_logger("tidal.taskmanager.reports")


class ReportBatcher:
    """``send(batch)`` delivers one encoded batch and returns when it has been taken."""

    def __init__(self, send: Callable[[bytes], None], linger_s: float = 0.001) -> None:
        self._send = send
        self._linger_s = linger_s
        self._pending: list[Event] = []
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="tidal-reports", daemon=True)
        self._thread.start()

    def __call__(self, event: Event) -> None:
        with self._ready:
            self._pending.append(event)
            self._ready.notify()

    def close(self) -> None:
        """Send what is pending, then stop."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._pending and not self._closed:
                    self._ready.wait()
                if not self._pending and self._closed:
                    return
                self._ready.wait(self._linger_s)
                batch, self._pending = self._pending, []
            try:
                self._send(encode(_without_running_of_ended(batch)))
            except Exception as error:  # its JobManager is gone for good: nobody to tell
                _log.warning("reports not delivered", events=len(batch), error=repr(error))


def _without_running_of_ended(batch: list[Event]) -> tuple[Event, ...]:
    ended = {
        (e.vertex, e.subtask, e.attempt)
        for e in batch
        if not isinstance(e, TaskRunning) and hasattr(e, "attempt")
    }
    return tuple(
        e
        for e in batch
        if not (isinstance(e, TaskRunning) and (e.vertex, e.subtask, e.attempt) in ended)
    )
