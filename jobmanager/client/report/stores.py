"""Finding a job's event log, running or ended, with its cluster or without, and reading it
into facts; the job history.

A job's log is in its store while the job runs and until ``jobstore.expiration-time`` after
it ended (``jobstore.dir``), and in its archive from its end on
(``jobmanager.archive.fs.dir``): both are files, so nothing here needs Ray, and a job whose
cluster is gone is read the same way. The store of a running job is read as it is being
written: a record cut short at its end is left alone, not repaired.
"""

from __future__ import annotations

from dataclasses import dataclass

import cloudpickle

from jobmanager.client.report.facts import JobFacts, facts_from_log
from jobmanager.errors import JobStoreError, UnknownJobError
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import Configuration
from jobmanager.runtime.archive import archive_root, archived_jobs
from jobmanager.runtime.details import JobDetails
from jobmanager.runtime.eventlog import read_log
from jobmanager.runtime.jobstore import JobStore, job_ids, store_root

__all__ = ["HistoryEntry", "find_job", "history", "job_facts"]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A job in ``tidal history``: ``status`` and ``tasks`` None while it has not ended."""

    job_id: str
    name: str
    status: JobStatus | None
    submitted_at: float
    ended_at: float | None
    tasks: int | None

    @staticmethod
    def ended(details: JobDetails) -> HistoryEntry:
        return HistoryEntry(
            details.job_id,
            details.name,
            details.status,
            details.submitted_at,
            details.ended_at,
            sum(v.tasks for v in details.vertices),
        )


def find_job(
    job_id: str, config: Configuration | None = None, store_url: str | None = None
) -> JobStore:
    """The store of ``job_id`` (``store_url`` if known, else under ``jobstore.dir``), or its
    archive; UnknownJobError naming where it looked."""
    config = config or Configuration()
    places = [JobStore(store_url.rstrip("/").rsplit("/", 1)[0], job_id)] if store_url else []
    places += [JobStore(store_root(config), job_id), JobStore(archive_root(config), job_id)]
    for store in places:
        if store.exists():
            return store
    where = " or ".join(dict.fromkeys(s.url.rsplit("/", 1)[0] for s in places))
    raise UnknownJobError(
        f"no job {job_id!r} in {where} (set jobstore.dir or "
        "jobmanager.archive.fs.dir if it ran with another)"
    )


def job_facts(store: JobStore, job_id: str) -> JobFacts:
    """Replay the job's whole log (from its start, not a snapshot: the timeline needs every
    event)."""
    records = store._call("read the event log", lambda: list(read_log(store.events_url)))
    submitted = store.submitted(records)
    try:
        graph = cloudpickle.loads(store.blob(submitted.graph_key))
    except JobStoreError:
        raise
    except Exception as error:
        raise JobStoreError(
            f"job store {store.url}: the job graph cannot be read back here "
            f"(its code needs what it imported): {type(error).__name__}: "
            f"{error}"
        ) from None
    return facts_from_log(graph, submitted, records[1:], job_id, store.final_status())


def history(config: Configuration | None = None) -> list[HistoryEntry]:
    """Every archived job, newest first, and the jobs whose store has no archive yet (running,
    or ended moments ago): name, id, status, submitted and ended times, tasks."""
    config = config or Configuration()
    jobs = {
        job_id: HistoryEntry.ended(details)
        for job_id, details in archived_jobs(archive_root(config))
    }
    for job_id, submitted, final in _stored_jobs(store_root(config)):
        if job_id in jobs:
            continue
        jobs[job_id] = (
            HistoryEntry.ended(final)
            if final
            else HistoryEntry(job_id, submitted.name, None, submitted.submitted_at, None, None)
        )
    return sorted(jobs.values(), key=lambda job: job.submitted_at, reverse=True)


def _stored_jobs(root: str) -> list[tuple[str, ev.JobSubmitted, JobDetails | None]]:
    jobs = []
    for job_id in job_ids(root):
        try:
            store = JobStore(root, job_id)
            jobs.append((job_id, store.submitted(), store.final_status()))
        except JobStoreError:
            continue  # not a job's store, or one being created
    return jobs
