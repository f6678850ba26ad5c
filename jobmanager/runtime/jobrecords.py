"""Which jobs a JobManager took, kept by Ray's GCS key-value store for the cluster's life.

Ray restarts a JobManager with the arguments it was created with, and a standby JobManager is
created before it knows its job. So when a JobManager takes a job it writes here where the
job's store is; a restarted one reads it to know it had a job (and to fail the job clearly if
that store is gone), a client reads it to explain a JobManager that is gone for good, and the
ResourceManager reads them all to clean up after such a job (then marks it ``cleaned``).

A JobManager leaves once its job ended: it first adds the end to the record (``record_end``:
the final status, when the job's store and work directory expire), so clients list the job and
read its status from the store, and the ResourceManager removes both when they expire.
"""

from __future__ import annotations

import json

import ray.experimental.internal_kv as kv

from jobmanager.runtime.names import NAMESPACE

__all__ = ["forget_job", "job_record", "job_records", "mark_cleaned", "record_end", "record_job"]


def _key(job_id: str) -> str:
    return f"job/{job_id}"


def record_job(job_id: str, store_url: str, recovery: bool, work_dir: str = "") -> None:
    record = json.dumps({"store": store_url, "recovery": recovery, "work_dir": work_dir})
    kv._internal_kv_put(_key(job_id), record, overwrite=True, namespace=NAMESPACE)


def record_end(job_id: str, status: dict, expires_at: float) -> None:
    """The job ended with ``status`` (a JobManager's ``status()``); kept until ``expires_at``."""
    record = job_record(job_id) or {}
    record.update(
        ended_at=status["ended_at"], expires_at=expires_at, status=status["status"],
        name=status["name"], submitted_at=status["submitted_at"],
        vertices=len(status["vertices"]),
    )  # fmt: skip
    kv._internal_kv_put(_key(job_id), json.dumps(record), overwrite=True, namespace=NAMESPACE)


def job_record(job_id: str) -> dict | None:
    value = kv._internal_kv_get(_key(job_id), namespace=NAMESPACE)
    return None if value is None else json.loads(value)


def job_records() -> dict[str, dict]:
    """Every job a JobManager took and nobody forgot yet, by id."""
    keys = kv._internal_kv_list(_key(""), namespace=NAMESPACE)
    records = {}
    for key in keys:
        job_id = (key.decode() if isinstance(key, bytes) else key)[len(_key("")):]
        record = job_record(job_id)
        if record is not None:
            records[job_id] = record
    return records


def mark_cleaned(job_id: str, record: dict) -> None:
    kv._internal_kv_put(_key(job_id), json.dumps({**record, "cleaned": True}), overwrite=True,
                        namespace=NAMESPACE)  # fmt: skip


def forget_job(job_id: str) -> None:
    kv._internal_kv_del(_key(job_id), namespace=NAMESPACE)
