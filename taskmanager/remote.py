"""Fetching chunks of partitions held by other TaskManagers, over Ray.

The producing TaskManager is the named actor ``descriptor.task_manager_id`` in Tidal's
namespace; its ``read_chunk`` serves bounded chunks of a subpartition range. What can go wrong
becomes a :class:`shuffle.PartitionError`, as :mod:`shuffle.remote` requires, so the consumer
reports a lost partition and the scheduler reruns its producer:

- the producer raised a PartitionError (file missing, truncated, corrupt): that error, intact;
- the actor is gone, cannot be found, or does not answer in time: PartitionUnreachable.
"""

from __future__ import annotations

import threading

import ray
from ray.exceptions import RayError, RayTaskError

from shuffle import IndexRange, PartitionError, PartitionUnreachable, ShuffleDescriptor

__all__ = ["FETCH_TIMEOUT_S", "NAMESPACE", "RayChunkFetcher"]

NAMESPACE = "tidal"
FETCH_TIMEOUT_S = 120.0  # one chunk is a few MiB: a holder this slow is as good as gone


class RayChunkFetcher:
    """A ``shuffle.FetchChunk`` that asks the producing TaskManager actor. Thread-safe."""

    def __init__(self, namespace: str = NAMESPACE, timeout_s: float = FETCH_TIMEOUT_S) -> None:
        self.namespace = namespace
        self.timeout_s = timeout_s
        self._actors: dict[str, object] = {}
        self._lock = threading.Lock()

    def __call__(
        self, descriptor: ShuffleDescriptor, subpartitions: IndexRange, offset: int, max_bytes: int
    ) -> bytes:
        holder = descriptor.task_manager_id
        where = f"task manager {holder} on node {descriptor.node_id}"
        partition_id = descriptor.partition_id
        try:
            actor = self._actor(holder)
        except ValueError as error:  # ray.get_actor: no live actor of that name
            raise PartitionUnreachable(partition_id, where, str(error)) from error
        try:
            reply = actor.read_chunk.remote(
                partition_id.result,
                partition_id.index,
                subpartitions.start,
                subpartitions.end,
                offset,
                max_bytes,
            )
            return ray.get(reply, timeout=self.timeout_s)
        except RayTaskError as error:
            if isinstance(error.cause, PartitionError):
                raise error.cause from None
            raise
        except RayError as error:  # the actor died, is unavailable, or did not answer in time
            self._forget(holder)
            raise PartitionUnreachable(
                partition_id, where, f"{type(error).__name__}: {error}"
            ) from error

    def _actor(self, name: str):
        with self._lock:
            actor = self._actors.get(name)
        if actor is None:
            actor = ray.get_actor(name, namespace=self.namespace)
            with self._lock:
                self._actors[name] = actor
        return actor

    def _forget(self, name: str) -> None:
        with self._lock:
            self._actors.pop(name, None)
