"""The names Tidal's actors go by in Ray, in one place, and how to reach one by its name."""

import uuid

import ray

NAMESPACE = "tidal"
RESOURCE_MANAGER = "tidal-resource-manager"


def job_manager_name(job_id: str) -> str:
    return f"tidal-job-{job_id}"


def new_job_id() -> str:
    """A job's id: 16 hex digits, random (Flink's job ids are random hex too)."""
    return uuid.uuid4().hex[:16]


def resource_manager_handle():
    """The cluster's ResourceManager, found by its name (the client starts it before a job's
    JobManager, so a JobManager only ever looks it up). Raises ValueError if there is none."""
    return ray.get_actor(RESOURCE_MANAGER, namespace=NAMESPACE)


def here():
    """A scheduling strategy for an actor that should run on this process's node if it can
    (Ray may place it elsewhere when this node is gone or full)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
