"""Reports to the JobManager, sent in batches.

A no-op task finishes in about a millisecond; a Ray call costs about as much CPU on each side.
So reports made within ``linger_s`` of each other travel in one call: a thousand short tasks
cost tens of calls, not two thousand, and a single slow task's report waits two milliseconds.
Reports keep their order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from jobmanager.codec import encode
from jobmanager.events import Event

__all__ = ["ReportBatcher"]


class ReportBatcher:
    def __init__(self, send: Callable[[bytes], None], linger_s: float = 0.002) -> None:
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
            self._send(encode(tuple(batch)))
