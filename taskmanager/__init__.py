"""Tidal's TaskManager: slots that run tasks, their shuffle files, and a SparkSession.

    from taskmanager import TaskManagerActor          # the Ray actor (imports Ray)
    from taskmanager import TaskEnvironment, run_task  # the task runtime, no Ray needed

Names are imported on first use, so using the runtime never pulls in Ray, and an Arrow task
never pulls in PySpark.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "TaskManagerActor": "taskmanager.actor",
    "TaskEnvironment": "taskmanager.runner",
    "run_task": "taskmanager.runner",
    "TaskSlots": "taskmanager.slots",
    "CancelToken": "taskmanager.cancellation",
    "PartitionRegistry": "taskmanager.registry",
    "FetchedBlobs": "taskmanager.blobs",
    "SparkSessionProvider": "taskmanager.spark",
    "RayChunkFetcher": "taskmanager.remote",
    "describe_failure": "taskmanager.failures",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'taskmanager' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
