"""Tidal's actor classes as Ray knows them, made once per process.

Each ``ray.remote(cls)`` is a new class to Ray, under a fresh function id: its creator pickles
and exports it to the GCS again, and every process that receives a handle of one of its actors
loads it from the GCS again, once per id (about 5 ms, on a job's critical path: the client
claiming a standby JobManager, a JobManager taking a TaskManager's lease). Made once, a
process exports each class once, and a long-lived receiver loads it once.
"""

from __future__ import annotations

import functools

import ray

__all__ = ["actor_class"]


@functools.cache
def actor_class(cls: type):
    """``ray.remote(cls)``, the same object for every call in this process (Ray exports it
    again to a new cluster by itself, so it outlives a ``ray.shutdown``)."""
    return ray.remote(cls)
