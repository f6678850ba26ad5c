"""A job's end, the shell's half: once the core has ended the job, store its final status and
its logs, archive it for ``tidal history`` (``jobmanager.runtime.archive``), note the end in
the job's record, and leave; a finished job holds no process.

A mixin of ``JobManagerActor``, split out so the actor's module is about taking a job and
answering for it (its main loop is ``jobmanager.runtime.mainloop``). Storing and archiving may
copy files to an object store, so they run on their own thread (``tidal-conclude``) while the
main loop goes on.
"""

from __future__ import annotations

import threading
import time

import ray

from jobmanager.logs import log_since
from jobmanager.messages import events as ev
from jobmanager.model.config import JOBSTORE_EXPIRATION_TIME, RETAINED_JOBS, Configuration
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

    def _finish(self, through_loop: bool = True) -> None:
        """The job has ended (or the JobManager cannot go on with it): stop its work, then
        store its end and archive it off the loop. When the loop runs on, the archive's
        outcome comes back to it as ``JobArchived``, and the loop concludes once that is
        logged; a log that already holds it (a JobManager taking over an ended job) is not
        archived again."""
        self.ended_at = time.time()
        self.events.flush()
        self.metrics.saw_log(self.events.size)
        status, cause = self.unrecoverable or self.state.ended
        self.log.info("job done", status=status, cause=cause or None)
        self.executor.stop()
        try:
            resource_manager = resource_manager_handle()
            resource_manager.top_up_job_managers.remote()
            resource_manager.prepare_spare_task_manager.remote()
        except Exception as error:
            self.log.warning(
                "no standby job manager or spare task manager prepared", error=repr(error)
            )
        tell = self.mailbox.put if through_loop and self.state.archived is None else None
        threading.Thread(
            target=self._store_end, args=(tell,), name="tidal-conclude", daemon=True
        ).start()

    def _store_end(self, tell) -> None:
        """Store the job's final status and logs, archive the job unless its log says it was,
        then ``tell`` the loop how the archive went, or conclude here when no loop will."""
        try:
            store = JobStore(self.store_root, self.job_id)
            store.write_final_status(self._details(final=True))
            store.write_log("jobmanager", log_since())
        except Exception as error:
            self._stay(error)
            return
        archived = self.state is not None and self.state.archived is not None
        outcome = None if archived else self._archive(store)
        if tell is not None and outcome is not None:
            tell(outcome)
        else:
            self._conclude()

    def _archive(self, store: JobStore) -> ev.JobArchived:
        """Keep the job for ``tidal history`` (``jobmanager.runtime.archive``); a job whose
        archive cannot be written still ends, with a warning."""
        config = Configuration(dict(self.submitted.config) if self.submitted else {})
        try:
            archive = archive_job(store, archive_root(config), config[RETAINED_JOBS.key])
        except Exception as error:
            self.log.warning("job not archived", error=repr(error))
            return ev.JobArchived("", f"{type(error).__name__}: {error}")
        return ev.JobArchived(archive.url, "")

    def _conclude(self) -> None:
        """Note the job's end in its record (its log flushed first, so the archive's outcome
        is stored), answer whoever waits, and leave. Once: the loop and a thread storing the
        end of a job taken over may both come here."""
        with self.lock:
            if self.concluding:
                return
            self.concluding = True
        expiration = self._expiration_s()
        try:
            if self.events is not None:
                self.events.flush()
                self.metrics.saw_log(self.events.size)
            jobrecords.record_end(
                self.job_id, self._details(final=True).summary(), time.time() + expiration
            )
        except Exception as error:
            self._stay(error)
            return
        self.done.set()
        _after(_LEAVE_AFTER_S, ray.get_runtime_context().current_actor.leave.remote)

    def _stay(self, error: Exception) -> None:
        """The job's end could not be stored: stay to answer for ``jobstore.expiration-time``,
        then clean up."""
        self.log.warning("job end not stored: staying to answer", error=repr(error))
        self.done.set()
        _after(self._expiration_s(), ray.get_runtime_context().current_actor.exit.remote)

    def _expiration_s(self) -> float:
        config = Configuration(dict(self.submitted.config) if self.submitted else {})
        return config[JOBSTORE_EXPIRATION_TIME.key] / 1000


def _after(seconds: float, call) -> None:
    timer = threading.Timer(seconds, call)
    timer.daemon = True
    timer.start()


def release_job(job_id: str) -> None:
    try:
        resource_manager_handle().release_job.remote(job_id)
    except Exception:  # no ResourceManager: nothing is leased
        pass
