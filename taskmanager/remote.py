"""Fetching chunks of partitions held by other TaskManagers, over Ray.

The producing TaskManager is the named actor ``descriptor.task_manager_id`` in Tidal's
namespace; its ``read_chunk`` serves bounded chunks of a subpartition range. What can go wrong
becomes a :class:`shuffle.PartitionError`, as :mod:`shuffle.remote` requires, so the consumer
reports a lost partition and the scheduler reruns its producer:

- the producer raised a PartitionError (file missing, truncated, corrupt): that error, intact;
- the actor is gone, cannot be found, or does not answer in time: PartitionUnreachable.

A producing TaskManager that died leaves its files on its node, and its JobManager keeps those
it found whole (``jobmanager.core.losing``): the node then serves them, through a Ray task
pinned to it that reads the file the descriptor names. Only when that fails too (the node is
gone) is the partition unreachable.
"""

from __future__ import annotations

import threading
from pathlib import Path

import ray
from ray.exceptions import RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from shuffle import (
    IndexRange,
    PartitionError,
    PartitionId,
    PartitionServer,
    PartitionUnreachable,
    ShuffleDescriptor,
)

__all__ = ["FETCH_TIMEOUT_S", "NAMESPACE", "RayChunkFetcher"]

NAMESPACE = "tidal"
FETCH_TIMEOUT_S = 120.0  # one chunk is a few MiB: a holder this slow is as good as gone


class RayChunkFetcher:
    """A ``shuffle.FetchChunk`` that asks the producing TaskManager actor. Thread-safe."""

    def __init__(self, namespace: str = NAMESPACE, timeout_s: float = FETCH_TIMEOUT_S) -> None:
        self.namespace = namespace
        self.timeout_s = timeout_s
        self._actors: dict[str, object] = {}
        self._gone: set[str] = set()  # holders that died: their nodes serve their files
        self._lock = threading.Lock()

    def __call__(
        self, descriptor: ShuffleDescriptor, subpartitions: IndexRange, offset: int, max_bytes: int
    ) -> bytes:
        holder = descriptor.task_manager_id
        where = f"task manager {holder} on node {descriptor.node_id}"
        partition_id = descriptor.partition_id
        request = (
            partition_id.result,
            partition_id.index,
            subpartitions.start,
            subpartitions.end,
            offset,
            max_bytes,
        )
        with self._lock:
            gone = holder in self._gone
        if gone:
            return self._from_node(descriptor, request, where, "its TaskManager is gone")
        try:
            actor = self._actor(holder)
        except ValueError as error:  # ray.get_actor: no live actor of that name
            return self._from_node(descriptor, request, where, str(error))
        try:
            return ray.get(actor.read_chunk.remote(*request), timeout=self.timeout_s)
        except RayTaskError as error:
            if isinstance(error.cause, PartitionError):
                raise error.cause from None
            raise
        except RayError as error:  # the actor died, is unavailable, or did not answer in time
            self._forget(holder)
            return self._from_node(descriptor, request, where, f"{type(error).__name__}: {error}")

    def _from_node(self, descriptor: ShuffleDescriptor, request: tuple, where: str, why: str):
        """The chunk, read on the file's node by a task pinned there: its TaskManager died."""
        with self._lock:
            self._gone.add(descriptor.task_manager_id)
        try:
            pinned = NodeAffinitySchedulingStrategy(descriptor.node_id, soft=False)
            reply = _read_on_node.options(scheduling_strategy=pinned).remote(
                descriptor.path, *request
            )
            return ray.get(reply, timeout=self.timeout_s)
        except RayTaskError as error:
            if isinstance(error.cause, PartitionError):
                raise error.cause from None
            raise PartitionUnreachable(descriptor.partition_id, where, f"{why}; {error}") from error
        except (RayError, ValueError) as error:  # the node is gone too, or was never Ray's
            raise PartitionUnreachable(
                descriptor.partition_id,
                where,
                f"{why}; its node did not serve it: {type(error).__name__}: {error}",
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


class _OneFile:
    """The locator of a server for one file: the path a JobManager's descriptor names."""

    def __init__(self, path: str) -> None:
        if not path.endswith(".tpf"):
            raise ValueError(f"not a partition file: {path!r}")
        self.path = Path(path)

    def path_for(self, partition_id: PartitionId) -> Path:
        return self.path


@ray.remote(num_cpus=0, max_retries=0)
def _read_on_node(
    path: str, result: str, index: int, start: int, end: int, offset: int, max_bytes: int
) -> bytes:
    server = PartitionServer(_OneFile(path))
    return server.read_chunk(PartitionId(result, index), IndexRange(start, end), offset, max_bytes)
