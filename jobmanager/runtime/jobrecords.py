"""Which jobs a JobManager took, kept by Ray's GCS key-value store for the cluster's life.

Ray restarts a JobManager with the arguments it was created with, and a standby JobManager is
created before it knows its job. So when a JobManager takes a job it writes here where the
job's store is; a restarted one reads it to know it had a job (and to fail the job clearly if
that store is gone), a client reads it to explain a JobManager that is gone for good, and the
ResourceManager reads them all to clean up after such a job (then marks it cleaned).

A JobManager leaves once its job ended: it first adds the end to the record (``record_end``:
the job's summary, when the job's store and work directory expire), so clients list the job
and read its status from the store, and the ResourceManager removes both when they expire.

This module alone reads and writes the records, and a record has no read-then-write: each of
its parts is a key of its own, written once by its one writer, put-if-absent (Ray's
``overwrite=False``, atomic in the GCS). ``taken`` and ``ended`` are the JobManager's,
``cleaned`` the ResourceManager's; so a ResourceManager marking a lost job cleaned can never
erase an end a JobManager wrote meanwhile, as a rewrite of the whole record could. Each value
is ``[RECORD_VERSION, message]`` in msgpack; a record of another version is refused by name.
"""

from __future__ import annotations

from typing import Protocol

from ray.experimental import internal_kv

from jobmanager.errors import TidalError
from jobmanager.messages.codec import decode, encode, message
from jobmanager.runtime.details import JobSummary
from jobmanager.runtime.names import NAMESPACE

__all__ = [
    "RECORD_VERSION",
    "JobEnd",
    "JobRecord",
    "JobTaken",
    "KeyValueStore",
    "RayKeyValueStore",
    "forget_job",
    "job_record",
    "job_records",
    "mark_cleaned",
    "record_end",
    "record_job",
]

RECORD_VERSION = 1
_PREFIX = "job/"
_TAKEN, _ENDED, _CLEANED = "taken", "ended", "cleaned"


@message
class JobTaken:
    """Written by the JobManager as it takes the job: where the job's store is, whether Ray
    restarts the JobManager, the job's work directory."""

    store: str
    recovery: bool
    work_dir: str


@message
class JobEnd:
    """Written by the JobManager when the job ended: the job's summary, and when its store
    and work directory expire."""

    summary: JobSummary
    expires_at: float


@message
class JobCleaned:
    """Written by the ResourceManager once it cleaned up after a job whose JobManager is gone."""


@message
class JobRecord:
    """A job's record as read: ``end`` once it ended, ``cleaned`` once cleaned up after."""

    job_id: str
    taken: JobTaken
    end: JobEnd | None
    cleaned: bool

    @property
    def store_root(self) -> str:
        """The root its store was made under (``JobStore(record.store_root, job_id)``)."""
        return self.taken.store.rstrip("/").rsplit("/", 1)[0]


class KeyValueStore(Protocol):
    """The seam to Ray's GCS key-value store (``RayKeyValueStore``); tests pass a dict's."""

    def put_new(self, key: str, value: bytes) -> bool:
        """Store ``value`` unless ``key`` has one; whether it was stored."""

    def get(self, key: str) -> bytes | None: ...

    def keys(self, prefix: str) -> list[str]: ...

    def delete_prefix(self, prefix: str) -> None: ...


class RayKeyValueStore:
    """Ray's GCS key-value store, in Tidal's namespace."""

    def put_new(self, key: str, value: bytes) -> bool:
        return not internal_kv._internal_kv_put(key, value, overwrite=False, namespace=NAMESPACE)

    def get(self, key: str) -> bytes | None:
        return internal_kv._internal_kv_get(key, namespace=NAMESPACE)

    def keys(self, prefix: str) -> list[str]:
        return [key.decode() for key in internal_kv._internal_kv_list(prefix, namespace=NAMESPACE)]

    def delete_prefix(self, prefix: str) -> None:
        internal_kv._internal_kv_del(prefix, del_by_prefix=True, namespace=NAMESPACE)


_RAY = RayKeyValueStore()


def _key(job_id: str, part: str = "") -> str:
    return f"{_PREFIX}{job_id}/{part}"


def _put(store: KeyValueStore, key: str, part: object) -> bool:
    return store.put_new(key, encode((RECORD_VERSION, part)))


def _get(store: KeyValueStore, key: str):
    value = store.get(key)
    if value is None:
        return None
    version, part = decode(value)
    if version != RECORD_VERSION:
        raise TidalError(
            f"the job record {key} is of version {version}; this Tidal reads "
            f"version {RECORD_VERSION}"
        )
    return part


def record_job(
    job_id: str, store_url: str, recovery: bool, work_dir: str = "", kv: KeyValueStore = _RAY
) -> bool:
    """The JobManager took the job; False if it was recorded before (by this JobManager
    before it was restarted: the record stands)."""
    return _put(kv, _key(job_id, _TAKEN), JobTaken(store_url, recovery, work_dir))


def record_end(
    job_id: str, summary: JobSummary, expires_at: float, kv: KeyValueStore = _RAY
) -> bool:
    """The job ended as ``summary`` says; kept until ``expires_at``. False if an end was
    recorded before (the first end stands)."""
    return _put(kv, _key(job_id, _ENDED), JobEnd(summary, expires_at))


def mark_cleaned(job_id: str, kv: KeyValueStore = _RAY) -> None:
    _put(kv, _key(job_id, _CLEANED), JobCleaned())


def job_record(job_id: str, kv: KeyValueStore = _RAY) -> JobRecord | None:
    taken = _get(kv, _key(job_id, _TAKEN))
    if taken is None:  # not taken, forgotten, or being forgotten
        return None
    return JobRecord(
        job_id, taken, _get(kv, _key(job_id, _ENDED)), kv.get(_key(job_id, _CLEANED)) is not None
    )


def job_records(kv: KeyValueStore = _RAY) -> dict[str, JobRecord]:
    """Every job a JobManager took and nobody forgot yet, by id."""
    ids = {key[len(_PREFIX) :].split("/", 1)[0] for key in kv.keys(_PREFIX)}
    records = {job_id: job_record(job_id, kv) for job_id in sorted(ids)}
    return {job_id: record for job_id, record in records.items() if record is not None}


def forget_job(job_id: str, kv: KeyValueStore = _RAY) -> None:
    kv.delete_prefix(_key(job_id))
