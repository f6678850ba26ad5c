"""Standby JobManagers: started ahead of the next jobs, so a submission claims a process that
is up instead of starting one.

A JobManager is a process of its own per job; starting one (the interpreter, Ray, Tidal's
imports and warm-up) takes about 0.9 s on two cores, which a short job would feel. So the
ResourceManager keeps standby JobManagers, and the next submission claims the oldest ready one:
the job's id is the standby's. A claim while none is ready waits for one starting, which is
never slower than starting another.

The cluster's start prepares one; a job's end tops them up to ``STANDBY_JOB_MANAGERS`` (two).
With one, a query submitted as the last one ended (a script running queries in turn) waited
0.8-0.9 s for the standby started at that end (TPC-H q06 at scale 1: 1.5 s in all, against
0.7 s submitted later). With two, it claims the one started before, while the next starts
beside its job.

A mixin of ``ResourceManager`` (``jobmanager.runtime.resourcemanager``), which holds the
standbys (``_standbys``, ``_standby_starting``, ``_standby_ready``) under its lock and learns
them back after a restart.
"""

from __future__ import annotations

import structlog

from jobmanager.runtime.names import new_job_id

__all__ = ["STANDBY_JOB_MANAGERS", "StandbyJobManager"]

STANDBY_JOB_MANAGERS = 2  # kept ready after a job (see the module docstring)

_log = structlog.get_logger("tidal.resourcemanager")


class StandbyJobManager:
    """How the ResourceManager keeps a JobManager ready for the next job (see the module
    docstring)."""

    def prepare_job_manager(self, count: int = 1) -> None:
        """Start standby JobManagers until ``count`` are ready or starting."""
        with self._lock:
            starts = max(0, count - len(self._standbys) - self._standby_starting)
            self._standby_starting += starts
        from jobmanager.runtime.actor import create_job_manager

        for _ in range(starts):
            job_id = new_job_id()
            handle = create_job_manager(job_id, self.store_root)
            handle.ready.remote().future().add_done_callback(
                lambda future, job_id=job_id, handle=handle: self._standby_started(
                    job_id, handle, future
                )
            )

    def top_up_job_managers(self) -> None:
        """Start standbys until ``STANDBY_JOB_MANAGERS`` are ready or starting (a job has ended)."""
        self.prepare_job_manager(STANDBY_JOB_MANAGERS)

    def _standby_started(self, job_id: str, handle, future) -> None:
        try:
            future.result()
        except Exception as error:
            _log.warning("standby job manager did not start", job=job_id, error=repr(error))
            handle = None
        with self._lock:
            self._standby_starting -= 1
            if handle is not None:
                self._standbys.append((job_id, handle))
            self._standby_ready.notify_all()

    def claim_job_manager(
        self, store_root: str, timeout_s: float = 30.0
    ) -> tuple[str, object] | None:
        """The standby JobManager, now the caller's, waiting for it if it is starting; None if
        there is none, or if it would keep its job's store elsewhere than ``store_root`` (a
        JobManager restarted by Ray finds its store by where it was created to keep it)."""
        if store_root != self.store_root:
            return None
        with self._lock:
            self._standby_ready.wait_for(self._standby_or_none_starting, timeout_s)
            return self._standbys.pop(0) if self._standbys else None

    def has_job_manager(self, timeout_s: float) -> bool:
        """Prepare a standby JobManager and wait until one is ready."""
        self.prepare_job_manager()
        with self._lock:
            self._standby_ready.wait_for(self._standby_or_none_starting, timeout_s)
            return bool(self._standbys)

    def _standby_or_none_starting(self) -> bool:
        return bool(self._standbys) or not self._standby_starting
