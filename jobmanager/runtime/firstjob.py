"""What a cluster started by the client prepares for its first job, so that the job finds it up
or on its way rather than starting it."""

from __future__ import annotations

import ray

from jobmanager.model.config import TASKMANAGER_IDLE_TIMEOUT, Configuration
from jobmanager.runtime.jobstore import store_root
from jobmanager.runtime.resourcemanager import resource_manager

__all__ = ["prepare_first_job"]


def prepare_first_job() -> tuple[ray.ObjectRef, ray.ObjectRef]:
    """Ask the new cluster's ResourceManager for a standby JobManager and a warm TaskManager,
    without waiting for either; the answers: the first once the standby is starting, the second
    the TaskManager's id (None if none was started) once its process is asked for."""
    defaults = Configuration()
    rm = resource_manager(defaults[TASKMANAGER_IDLE_TIMEOUT.key] / 1000, store_root(defaults))
    return rm.prepare_job_manager.remote(), rm.prepare_task_manager.remote(defaults.to_bytes())
