"""The names Tidal's actors go by in Ray, in one place."""

import uuid

NAMESPACE = "tidal"
RESOURCE_MANAGER = "tidal-resource-manager"


def job_manager_name(job_id: str) -> str:
    return f"tidal-job-{job_id}"


def new_job_id() -> str:
    """A job's id: 16 hex digits, random (Flink's job ids are random hex too)."""
    return uuid.uuid4().hex[:16]
