"""The ResourceManager's reaper: a thread that, every few seconds, stops the TaskManagers kept
idle past their job's ``resourcemanager.taskmanager-timeout``, drops the lease requests of jobs
whose JobManager is gone, gives back the TaskManagers of a JobManager gone for longer than the
job's recovery timeout, and cleans up lost and expired jobs (``jobmanager.runtime.cleanup``).

A mixin of ``ResourceManager`` (``jobmanager.runtime.resourcemanager``), which starts the thread
and holds the books it reads under its lock.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import ray
import structlog

from jobmanager.runtime.cleanup import clean_up_expired_jobs, clean_up_lost_jobs
from jobmanager.runtime.names import NAMESPACE, job_manager_name

if TYPE_CHECKING:
    from jobmanager.runtime.resourcemanager import _TaskManager

__all__ = ["Reaper"]

_log = structlog.get_logger("tidal.resourcemanager")


class Reaper:
    """What the ResourceManager ends on its own (see the module docstring)."""

    def _idle_timeout(self, tm: _TaskManager) -> float:
        """``resourcemanager.taskmanager-timeout`` of the job it last served, which takes
        effect for every job, not only the one that started the ResourceManager."""
        return self.idle_timeout_s if tm.idle_timeout_s is None else tm.idle_timeout_s

    def _reap(self) -> None:
        while True:
            with self._lock:
                shortest = min(
                    (self._idle_timeout(tm) for tm in self.task_managers.values()),
                    default=self.idle_timeout_s,
                )
            time.sleep(min(5.0, max(0.5, shortest / 4)))
            now = time.time()
            with self._lock:
                expired = [
                    t
                    for t, tm in self.task_managers.items()
                    if tm.job is None and now - tm.since > self._idle_timeout(tm)
                ]
                leases = [
                    (t, tm.job, tm.recovery_timeout_s)
                    for t, tm in self.task_managers.items()
                    if tm.job
                ]
            for tm_id in expired:
                self.forget(tm_id)
            with self._lock:
                waiting_for = {w.request.job_id for w in self._waiting.values()}
            gone = {job for job in waiting_for if not _alive(job)}
            if gone:
                with self._lock:
                    self._cancel_waiting(gone.__contains__)
            for job_id in {job for _, job, _ in leases}:
                if _alive(job_id):
                    self._orphaned_since.pop(job_id, None)
                else:
                    self._orphaned_since.setdefault(job_id, now)
            for tm_id, job_id, timeout_s in leases:
                gone = self._orphaned_since.get(job_id)
                if gone is not None and now - gone >= timeout_s:
                    _log.info("job manager gone, lease ends", job=job_id, task_manager=tm_id)
                    self.give_back(job_id, tm_id)
            try:
                clean_up_lost_jobs(_alive)
                clean_up_expired_jobs(time.time())
            except Exception as error:  # the GCS unreachable a moment: next round
                _log.warning("ended and lost jobs not cleaned up", error=repr(error))


def _alive(job_id: str) -> bool:
    try:
        ray.get_actor(job_manager_name(job_id), namespace=NAMESPACE)
        return True
    except ValueError:
        return False
