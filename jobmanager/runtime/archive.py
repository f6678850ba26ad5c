"""A finished job's archive: what ``tidal history``, ``tidal explain`` and ``tidal report``
read once the job's store is gone.

Flink's JobManager archives a finished job to ``jobmanager.archive.fs.dir`` for its history
server; Tidal's does the same without a server. The archive has the layout of a job store
(``jobmanager.runtime.jobstore``) holding only what a replay of the job needs: the event log,
the job graph's blob, the final status and the logs. Snapshots, shuffle descriptors and the
vertices' code blobs stay behind, and go when the store expires. The newest
``historyserver.archive.retained-jobs`` archives are kept.
"""

from __future__ import annotations

import os

import structlog

from blob import BlobKey
from jobmanager.model.config import ARCHIVE_DIR, Configuration
from jobmanager.runtime.details import JobDetails
from jobmanager.runtime.eventlog import JobStoreError
from jobmanager.runtime.jobstore import STATUS_FILE, JobStore, job_ids, local_job_ids_oldest_first

__all__ = ["archive_job", "archive_root", "archived_jobs"]

_log = structlog.get_logger("tidal.archive")


def archive_root(config: Configuration) -> str:
    """``jobmanager.archive.fs.dir``, else ``$TIDAL_HOME/history`` (``~/.tidal/history``)."""
    configured = config[ARCHIVE_DIR.key]
    if configured and "://" in configured:
        return configured.rstrip("/")
    home = os.environ.get("TIDAL_HOME") or os.path.join(os.path.expanduser("~"), ".tidal")
    return os.path.abspath(os.path.expanduser(configured or os.path.join(home, "history")))


def archive_job(store: JobStore, root: str, retained: int) -> JobStore:
    """Copy what a replay of the job needs from its ``store`` into its archive under ``root``
    (written whole before the final status, which marks an archive complete), then drop the
    oldest archives beyond ``retained`` (-1: keep all)."""
    archive = JobStore(root, store.url.rstrip("/").rsplit("/", 1)[-1])

    def copy() -> None:
        source, target = store.fs, archive.fs
        if target.exists(archive.path):
            target.rm(archive.path, recursive=True)
        for folder in ("events", "logs"):
            try:
                names = source.ls(f"{store.path}/{folder}", detail=False)
            except FileNotFoundError:
                continue
            target.makedirs(f"{archive.path}/{folder}", exist_ok=True)
            for name in names:
                target.pipe_file(
                    f"{archive.path}/{folder}/{name.rsplit('/', 1)[-1]}", source.cat_file(name)
                )
        graph = BlobKey(store.submitted().graph_key)
        archive.blobs().put(store.blobs().get(graph))
        target.pipe_file(
            f"{archive.path}/{STATUS_FILE}", source.cat_file(f"{store.path}/{STATUS_FILE}")
        )

    archive._call("archive the job", copy)
    if retained >= 0:
        _drop_oldest(root, retained)
    return archive


def archived_jobs(root: str) -> list[tuple[str, JobDetails]]:
    """``(job id, final status)`` of every complete archive under ``root``, newest first."""
    jobs = []
    for job_id in job_ids(root):
        try:
            status = JobStore(root, job_id).final_status()
        except JobStoreError:  # not an archive
            continue
        if status is not None:  # else being written
            jobs.append((job_id, status))
    jobs.sort(key=lambda job: job[1].submitted_at, reverse=True)
    return jobs


def _drop_oldest(root: str, retained: int) -> None:
    """Every job's end comes here: below the limit, one listing and no status read. Above it,
    once a history has filled up, at every job's end: in a local folder the archives go
    oldest first by when each was written, as Flink's HistoryServer orders its archives, and
    only those dropped are read (reading every archive's status to order them cost 135-200 ms
    a job at 1,000 archives on a busy machine, against 9-12 ms so); elsewhere they go by their
    jobs' submission, from every status."""
    names = job_ids(root)
    if len(names) <= retained:
        return
    oldest_first = local_job_ids_oldest_first(root)
    if oldest_first is None:
        jobs = archived_jobs(root)
        dropped = [job_id for job_id, _ in jobs[retained:]]
    else:
        dropped = [
            job_id
            for job_id in oldest_first[: len(oldest_first) - retained]
            if _is_archive(root, job_id)
        ]
    for job_id in dropped:
        try:
            JobStore(root, job_id).remove()
        except JobStoreError as error:
            _log.warning("old archive not removed", job=job_id, error=str(error))


def _is_archive(root: str, job_id: str) -> bool:
    """Whether ``job_id``'s folder is a whole archive (not another folder, nor one being
    written): such a folder counts towards the retained, and is left."""
    try:
        return JobStore(root, job_id).final_status() is not None
    except JobStoreError:
        return False
