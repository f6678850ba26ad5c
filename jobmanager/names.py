"""The names Tidal's actors go by in Ray, in one place."""

NAMESPACE = "tidal"
RESOURCE_MANAGER = "tidal-resource-manager"


def job_manager_name(job_id: str) -> str:
    return f"tidal-job-{job_id}"
