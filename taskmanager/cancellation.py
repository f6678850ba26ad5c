"""CancelToken: cooperative cancellation of one running task.

A Python thread cannot be stopped from outside, so a task checks its token between phases
(after each input, before and after its operator, between outputs). Work that can be stopped
from outside registers how: a PySpark function registers the cancellation of its Spark job
group, which interrupts the running Spark job at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from taskmanager.failures import TaskCancelled

__all__ = ["CancelToken"]

_log = structlog.get_logger("tidal.taskmanager")


class CancelToken:
    """Thread-safe; cancelling twice is harmless."""

    def __init__(self) -> None:
        self._cancelled = threading.Event()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next_id = 0
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Mark cancelled and run every registered stopper once."""
        with self._lock:
            if self._cancelled.is_set():
                return
            self._cancelled.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            try:
                callback()
            except Exception:
                _log.warning("a cancellation callback failed", exc_info=True)

    def check(self, where: str) -> None:
        """Raise TaskCancelled if cancelled; ``where`` says at which point it was noticed."""
        if self._cancelled.is_set():
            raise TaskCancelled(where)

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when cancelled (now, if already); returns the unregistering call."""
        with self._lock:
            if not self._cancelled.is_set():
                handle = self._next_id
                self._next_id += 1
                self._callbacks[handle] = callback
                return lambda: self._forget(handle)
        callback()
        return lambda: None

    def _forget(self, handle: int) -> None:
        with self._lock:
            self._callbacks.pop(handle, None)
