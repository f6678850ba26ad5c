"""The spare TaskManager: a process up and imported, which the next lost TaskManager's
replacement becomes instead of starting one.

A TaskManager killed costs what it was running, plus what its replacement takes to run it
again. Starting a replacement is a process (0.4 s), Tidal's and PySpark's imports (0.5 s)
and a Spark JVM; the JVM is the lost one's, adopted warm (``taskmanager.kept_jvm``), and the
spare has the rest done before any loss. When a job ends, the ResourceManager starts one, as it
starts a standby JobManager; a loss promotes it (``take_over``), and the next job's end starts
another.

It holds no CPUs in Ray's books, so it waits beside the TaskManagers that hold them all; once
promoted, the lost TaskManager's CPUs are its own in the ResourceManager's books (its ``shape``),
which is what decides leases and starts; Ray only sees fewer held on its node.

A mixin of ``ResourceManager`` (``jobmanager.runtime.resourcemanager``), which holds the spare
(``_spare``: its id and handle) under its lock and learns it back after a restart.
"""

from __future__ import annotations

import ray
import structlog

__all__ = ["SpareTaskManager"]

_log = structlog.get_logger("tidal.resourcemanager")


class SpareTaskManager:
    """How the ResourceManager keeps a TaskManager process ready to replace a lost one (see
    the module docstring)."""

    def prepare_spare_task_manager(self) -> None:
        """Start a spare TaskManager, unless there is one, or no TaskManager to stand in for."""
        with self._lock:
            if self._spare is not None or not self.task_managers:
                return
            tm_id = self._next_task_manager_id()
            handle = self._task_manager_options(
                tm_id, cpus=0, threads=int(self._total_cpus)
            ).remote(tm_id, spare=True)
            self._spare = (tm_id, handle)
        _log.info("spare task manager started", task_manager=tm_id)

    def has_spare_task_manager(self, timeout_s: float) -> bool:
        """Prepare a spare TaskManager and wait until it is up; True if there is none to
        prepare (no TaskManager yet)."""
        self.prepare_spare_task_manager()
        with self._lock:
            spare = self._spare
        if spare is None:
            return True
        try:
            return bool(ray.get(spare[1].describe.remote(), timeout=timeout_s))
        except Exception as error:  # it died starting: the next job's end starts another
            _log.warning("spare task manager not up", task_manager=spare[0], error=repr(error))
            with self._lock:
                if self._spare is spare:
                    self._spare = None
            return False

    def _promoted_spare(self, lost_id: str, slots: int, config) -> tuple | None:
        """The spare, told to replace ``lost_id`` with ``slots`` slots and ``config``: its id,
        handle and scratch folder; None if there is no spare (under the lock)."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        tm_id, handle = spare
        scratch = self._scratch_of(tm_id, config)
        handle.take_over.remote(slots, config.to_bytes(), scratch, lost_id)
        _log.info("spare task manager promoted", task_manager=tm_id, replaces=lost_id)
        return tm_id, handle, scratch
