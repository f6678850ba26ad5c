"""A job's end, the shell's half: once the core has ended the job, store its final status and
its logs, archive it for ``tidal history`` (``jobmanager.runtime.archive``), note the end in
the job's record, and leave; a finished job holds no process.

A mixin of ``JobManagerActor``, split out so the actor's module is about taking a job and
running its main loop. Storing and archiving may copy files to an object store, so they run
on their own thread (``tidal-conclude``) while the main loop goes on.
"""

from __future__ import annotations

import threading
import time

import ray

from jobmanager.logs import log_since
from jobmanager.model.config import Configuration
from jobmanager.runtime import jobrecords
from jobmanager.runtime.archive import archive_job, archive_root
from jobmanager.runtime.cleanup import abort_sinks, clean_up_job
from jobmanager.runtime.jobstore import JobStore
from jobmanager.runtime.names import resource_manager_handle

__all__ = ["JobEnding", "release_job"]

_LEAVE_AFTER_S = 1.0  # a client's wait() answered at the end gets its reply before the process goes


class JobEnding:
    """What ``JobManagerActor`` does once its job has ended (see the module docstring)."""

    def _abort_sinks(self) -> None:
        """Drop what the job's sinks staged (after a commit there is nothing left to drop)."""
        abort_sinks(self.job_id, self.submitted.sink_paths if self.submitted else ())

    def _clean_up(self) -> None:
        clean_up_job(self.job_id, JobStore(self.store_root, self.job_id), self.submitted)
        jobrecords.forget_job(self.job_id)

    def _finish(self) -> None:
        self.ended_at = time.time()
        self.events.flush()
        self.metrics.saw_log(self.events.size)
        status, cause = self.unrecoverable or self.state.ended
        self.log.info("job done", status=status, cause=cause or None)
        self.executor.stop()
        try:
            resource_manager_handle().prepare_job_manager.remote()
        except Exception as error:
            self.log.warning("no standby job manager prepared", error=repr(error))
        # storing the end and archiving copy files, maybe to an object store: off the loop
        threading.Thread(target=self._conclude, name="tidal-conclude", daemon=True).start()

    def _conclude(self) -> None:
        """Store the job's end, answer whoever waits, and leave; if the store cannot take it,
        stay to answer for ``jobstore.expiration-time``, then clean up. On its own thread when
        the job ends (``_finish``): writing the store and the archive may copy files to an
        object store, and the main loop goes on meanwhile."""
        expiration = Configuration(dict(self.submitted.config) if self.submitted else {})[
            "jobstore.expiration-time"
        ]
        me = ray.get_runtime_context().current_actor
        try:
            details = self._details()
            store = JobStore(self.store_root, self.job_id)
            store.write_final_status(details)
            store.write_log("jobmanager", log_since())
            self._archive(store)
            jobrecords.record_end(self.job_id, details.summary(), time.time() + expiration / 1000)
        except Exception as error:
            self.log.warning("job end not stored: staying to answer", error=repr(error))
            self.done.set()
            _after(expiration / 1000, me.exit.remote)
            return
        self.done.set()
        _after(_LEAVE_AFTER_S, me.leave.remote)

    def _archive(self, store: JobStore) -> None:
        """Keep the job for ``tidal history`` (``jobmanager.runtime.archive``); a job whose
        archive cannot be written still ends, with a warning."""
        config = Configuration(dict(self.submitted.config) if self.submitted else {})
        try:
            archive_job(store, archive_root(config), config["historyserver.archive.retained-jobs"])
        except Exception as error:
            self.log.warning("job not archived", error=repr(error))

def _after(seconds: float, call) -> None:
    timer = threading.Timer(seconds, call)
    timer.daemon = True
    timer.start()


def release_job(job_id: str) -> None:
    try:
        resource_manager_handle().release_job.remote(job_id)
    except Exception:  # no ResourceManager: nothing is leased
        pass
