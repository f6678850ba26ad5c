"""Builders of ``JobDetails`` for tests that read them (progress, history, records): every
field has a plain default, and a test names only what it is about."""

from __future__ import annotations

from dataclasses import replace

from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import JobDetails, VertexDetails
from jobmanager.runtime.status import empty_status


def vertex_details(name: str, parallelism: int | None = None, **fields) -> VertexDetails:
    defaults = dict(
        name=name,
        members=(name,),
        parallelism=parallelism,
        max_parallelism=128,
        tasks=parallelism or 0,
        finished=0,
        running=0,
        deployments=0,
        rows_in=0,
        rows_out=0,
        bytes_in=0,
        bytes_in_remote=0,
        ranges_read=0,
        phases_ms={},
        queued_ms=0,
        spark_jobs=0,
        bytes_out=0,
        duration_s=None,
        started_at=None,
        explanation="why not",
    )
    return VertexDetails(**{**defaults, **fields})


def job_details(
    job_id: str = "job-7", status: JobStatus = JobStatus.RUNNING, **fields
) -> JobDetails:
    return replace(empty_status(job_id, None, status), **fields)
