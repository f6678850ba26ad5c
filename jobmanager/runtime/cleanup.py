"""Cleaning up after a job: what its sinks staged is dropped (an old target that a broken
commit had set aside is put back) and its store removed; a sink a finished job published is
left alone, unless it is Tidal's own (a query's result collected for its client, under the job
stores: ``JobSubmitted.result_paths``), which goes with the store. The JobManager does it when
it is let go early (``release``); the ResourceManager does it for a job whose JobManager is
gone for good (recovery off, or Ray gave up restarting it), so no staging directory or store of
such a job stays behind, and for an ended job once ``jobstore.expiration-time`` has passed (its
store and its work directory).
"""

from __future__ import annotations

import shutil

import structlog

from jobmanager.messages.events import JobSubmitted
from jobmanager.model import storage
from jobmanager.model.operators import ParquetSink
from jobmanager.runtime import jobrecords, sinks
from jobmanager.runtime.jobstore import JobStore

__all__ = [
    "abort_sinks",
    "clean_up_expired_jobs",
    "clean_up_job",
    "clean_up_lost_jobs",
    "remove_results",
]

_log = structlog.get_logger("tidal.cleanup")


def abort_sinks(job_id: str, sink_paths) -> None:
    for path in sink_paths:
        try:
            sinks.abort(ParquetSink(path), job_id)
        except OSError as error:
            _log.warning("sink staging not removed", job=job_id, sink=path, error=repr(error))


def remove_results(job_id: str, result_paths) -> None:
    for path in result_paths:
        try:
            fs, target = storage.filesystem(path)
            if fs.exists(target):
                fs.rm(target, recursive=True)
        except OSError as error:
            _log.warning("collected result not removed", job=job_id, result=path, error=repr(error))


def clean_up_job(
    job_id: str, store: JobStore, submitted: JobSubmitted | None = None, work_dir: str = ""
) -> None:
    """``submitted`` (the job's first event, for its sinks) None: read it from the store (a
    job whose JobManager is gone)."""
    if work_dir:
        shutil.rmtree(work_dir, ignore_errors=True)
    try:
        if submitted is None and store.exists():
            submitted = store.submitted()
        if submitted is not None:
            abort_sinks(job_id, submitted.sink_paths)
            remove_results(job_id, submitted.result_paths)
        store.remove()
    except Exception as error:
        _log.warning("job store not removed", job=job_id, store=store.url, error=repr(error))


def clean_up_lost_jobs(alive) -> list[str]:
    """Clean up after every recorded job whose JobManager is not ``alive(job_id)``; the
    record stays, marked, so a client can still be told why its job is gone."""
    return _clean_up_recorded_jobs(
        lambda job_id, record: not (record.cleaned or record.end is not None or alive(job_id)),
        jobrecords.mark_cleaned,
        "job cleaned up after its JobManager was gone",
    )


def clean_up_expired_jobs(now: float) -> list[str]:
    """Remove the store and the work directory of every ended job whose retention is over,
    and forget it."""
    return _clean_up_recorded_jobs(
        lambda job_id, record: record.end is not None and record.end.expires_at <= now,
        jobrecords.forget_job,
        "ended job expired: store and work directory removed",
    )


def _clean_up_recorded_jobs(chosen, then, logged: str) -> list[str]:
    """The ids of the recorded jobs ``chosen(job_id, record)``, each cleaned up (its store and
    work directory removed), then ``then(job_id)`` and logged."""
    cleaned = []
    for job_id, record in jobrecords.job_records().items():
        if not chosen(job_id, record):
            continue
        clean_up_job(job_id, JobStore(record.store_root, job_id), work_dir=record.taken.work_dir)
        then(job_id)
        _log.info(logged, job=job_id)
        cleaned.append(job_id)
    return cleaned
