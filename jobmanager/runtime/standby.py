"""The standby JobManager: one started ahead of the next job, so a submission claims a process
that is up instead of starting one.

A JobManager is a process of its own per job; starting one (the interpreter, Ray, Tidal's
imports) takes about half a second, which a short job would feel. So when a job ends, the
ResourceManager starts a standby JobManager, and the next submission claims it: the job's id is
the standby's. A claim while the standby is still starting waits for it, which is never slower
than starting another.

A mixin of ``ResourceManager`` (``jobmanager.runtime.resourcemanager``), which holds the
standby (``_standby``, ``_standby_starting``, ``_standby_ready``) under its lock and learns it
back after a restart.
"""

from __future__ import annotations

import structlog

from jobmanager.runtime.names import new_job_id

__all__ = ["StandbyJobManager"]

_log = structlog.get_logger("tidal.resourcemanager")


class StandbyJobManager:
    """How the ResourceManager keeps a JobManager ready for the next job (see the module
    docstring)."""

    def prepare_job_manager(self) -> None:
        """Start a standby JobManager, unless one is ready or starting."""
        with self._lock:
            if self._standby is not None or self._standby_starting:
                return
            self._standby_starting = True
        from jobmanager.runtime.actor import create_job_manager

        job_id = new_job_id()
        handle = create_job_manager(job_id, self.store_root)
        handle.ready.remote().future().add_done_callback(
            lambda future: self._standby_started(job_id, handle, future)
        )

    def _standby_started(self, job_id: str, handle, future) -> None:
        try:
            future.result()
        except Exception as error:
            _log.warning("standby job manager did not start", job=job_id, error=repr(error))
            handle = None
        with self._lock:
            self._standby_starting = False
            self._standby = (job_id, handle) if handle is not None else None
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
            self._standby_ready.wait_for(lambda: not self._standby_starting, timeout_s)
            standby, self._standby = self._standby, None
        return standby

    def has_job_manager(self, timeout_s: float) -> bool:
        """Prepare a standby JobManager and wait until it is ready."""
        self.prepare_job_manager()
        with self._lock:
            self._standby_ready.wait_for(lambda: not self._standby_starting, timeout_s)
            return self._standby is not None
