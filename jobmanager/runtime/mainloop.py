"""The JobManager's main loop, one thread: take the messages waiting in the mailbox, append
their events to the job's event log, apply them (``JobManagerState.handle``), write the log,
hand the commands to the executor; and, between batches, a snapshot of the state now and then.

A mixin of ``JobManagerActor`` (``jobmanager.runtime.actor``), split out as ``JobEnding`` is,
so the actor's module is about taking a job, taking it over and answering for it.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback

from jobmanager.core import snapshot as snapshots
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import EVENT_FLUSH_INTERVAL, SNAPSHOT_MIN_PAUSE
from jobmanager.runtime.jobstore import StoredSnapshot

__all__ = ["STOP", "MainLoop"]

STOP = object()  # in the mailbox: the loop ends


class MainLoop:
    """How ``JobManagerActor`` runs its job's core (see the module docstring)."""

    def _start_loop(self) -> None:
        threading.Thread(target=self._loop, name="tidal-main-loop", daemon=True).start()
        threading.Thread(target=self._flush_events, name="tidal-event-log", daemon=True).start()

    def _loop(self) -> None:
        while True:
            batch = self._next_events()
            if batch is None:
                return
            try:
                began = time.perf_counter()
                applied = self._apply(batch)
                took = time.perf_counter() - began
                self.metrics.loop_batch(took, applied)
                self.loop_seconds.append(took)
                self._maybe_snapshot()
            except Exception as error:  # a bug in the core: fail the job, keep answering
                self.log.error(
                    "internal error", error=repr(error), traceback=traceback.format_exc()
                )
                with self.lock:
                    self.unrecoverable = (
                        JobStatus.FAILED,
                        f"internal error in the JobManager: {error!r}",
                    )
                self._abort_sinks()
                self._finish(through_loop=False)
                return
            if self.state.ended is not None and self.ended_at is None:
                self._finish()
            elif self.state.archived is not None:
                self._conclude()

    def _apply(self, batch: list) -> int:
        """Log, apply, log the decisions the core made, write the log, then act: nothing
        leaves before its cause is stored. The number of events applied, decisions counted."""
        commands = []
        applied = len(batch)
        with self.lock:
            now = time.time()
            for event in batch:
                self.events.append(event, int(now * 1000))
                self.ledger.saw_event(event, now)
                step = self.state.handle(event)
                applied += len(step.events)
                for decided in step.events:
                    self.events.append(decided, int(now * 1000))
                    self.ledger.saw_event(decided, now)
                    self.metrics.saw_decision(decided)
                self.metrics.saw_event(event, step.commands)
                commands.extend(step.commands)
            for command in commands:
                self.ledger.saw_command(command, now)
        if commands:
            self.events.flush()
        self.executor.execute_all(commands)
        return applied

    def _maybe_snapshot(self) -> None:
        pause = self.config[SNAPSHOT_MIN_PAUSE.key] / 1000
        if (
            time.monotonic() - self.snapshot_at < pause
            or self.state.events_applied == self.snapshot_events
        ):
            return
        began = time.monotonic()
        with self.lock:
            image, ledger = snapshots.take(self.state), self.ledger.export()
        segment = self.events.roll()
        self.store.write_snapshot(StoredSnapshot(segment, image, ledger))
        self.snapshot_at, self.snapshot_events = time.monotonic(), self.state.events_applied
        self.log.info(
            "snapshot written",
            events=self.state.events_applied,
            segment=segment,
            ms=int((time.monotonic() - began) * 1000),
        )

    def _next_events(self) -> list | None:
        """The next event, and every other one already waiting (up to a bound): applied in one
        go, their commands go out in one round, so deployments to a TaskManager share a call."""
        batch = [self.mailbox.get()]
        while len(batch) < 256:
            try:
                batch.append(self.mailbox.get_nowait())
            except queue.Empty:
                break
        if STOP in batch:
            return None
        return batch

    def _flush_events(self) -> None:
        interval = self.config[EVENT_FLUSH_INTERVAL.key] / 1000
        while not self.done.wait(interval):
            self.events.flush()
            self.metrics.saw_log(self.events.size)
