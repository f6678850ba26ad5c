"""TaskManagerActor: the Ray shell around a TaskManager's slots, shuffle files and Spark.

The JobManager makes it a named, threaded actor (``max_concurrency`` = slots + 8): every method
returns promptly, tasks run on the slots' own threads, and the spare actor threads serve
``read_chunk`` to consumers on other nodes while tasks run. Everything here is wiring; the
task runtime is in :mod:`taskmanager.runner` and its modules, which need no Ray.

Options read from ``config`` (Flink-style keys):

- ``taskmanager.node-id``: the node this TaskManager says it is on (default: Ray's node id).
  Consumers on the same node read its partition files directly; tests set two different ids
  to force reads through ``read_chunk``.
- ``taskmanager.memory.spark-driver``: the SparkSession's JVM heap (bytes or "2g"; default
  1 GiB).
"""

from __future__ import annotations

import os

import ray
import structlog

from blob import BlobCache, BlobKey
from jobmanager.codec import decode, encode
from jobmanager.deployment import TaskDeploymentDescriptor
from jobmanager.events import Event
from jobmanager.logs import configure_logging
from shuffle import IndexRange, PartitionId, PartitionServer, ShuffleDirectory
from taskmanager.blobs import FetchedBlobs
from taskmanager.registry import PartitionRegistry
from taskmanager.remote import RayChunkFetcher
from taskmanager.runner import TaskEnvironment, run_task
from taskmanager.slots import TaskSlots
from taskmanager.spark import SparkSessionProvider

__all__ = ["NODE_ID_KEY", "TaskManagerActor"]

NODE_ID_KEY = "taskmanager.node-id"
_SHUTDOWN_WAIT_S = 5.0
_SPARK_DIR = ".spark"  # beside the partition files; a result's folder never starts with a dot


class TaskManagerActor:
    """One TaskManager of job ``job_id``: ``slots`` slots, partition files under
    ``shuffle_root``, reports to ``job_manager`` (an actor with ``report`` and ``get_blob``)."""

    def __init__(
        self,
        task_manager_id: str,
        job_id: str,
        job_manager,
        slots: int,
        shuffle_root: str,
        config: dict,
    ) -> None:
        configure_logging("INFO")
        self.task_manager_id = task_manager_id
        self.node_id = str(config.get(NODE_ID_KEY) or ray.get_runtime_context().get_node_id())
        self._log = structlog.get_logger("tidal.taskmanager").bind(
            job=job_id, task_manager=task_manager_id
        )
        self._job_manager = job_manager
        self._shuffle = ShuffleDirectory(shuffle_root)
        self._registry = PartitionRegistry(task_manager_id)
        self._server = PartitionServer(self._registry)
        self._blobs = BlobCache(FetchedBlobs(self._fetch_blob, f"job manager of {job_id}"))
        self._spark = SparkSessionProvider(slots, self._shuffle.root / _SPARK_DIR, config)
        environment = TaskEnvironment(
            task_manager_id=task_manager_id,
            node_id=self.node_id,
            shuffle=self._shuffle,
            registry=self._registry,
            blobs=self._blobs,
            spark=self._spark,
            report=self._report,
            fetch_chunk=RayChunkFetcher(),
        )
        self._slots = TaskSlots(
            slots, lambda tdd, token: run_task(tdd, environment, token), self._report
        )
        self._log.info("task manager started", slots=slots, node=self.node_id,
                       shuffle_root=str(self._shuffle.root))

    def describe(self) -> dict:
        return {"node": self.node_id, "pid": os.getpid(), "shuffle_root": str(self._shuffle.root)}

    def deploy(self, tdd: bytes) -> None:
        deployment = decode(tdd)
        if not isinstance(deployment, TaskDeploymentDescriptor):
            raise TypeError(f"deploy takes a TaskDeploymentDescriptor, got {deployment!r:.200}")
        self._slots.submit(deployment)

    def cancel(self, vertex: str, subtask: int, attempt: int) -> None:
        self._slots.cancel((vertex, subtask, attempt))

    def release(self, partitions: bytes) -> None:
        """Delete these producer attempts' files; ``partitions`` encodes (ids, attempts)."""
        ids, attempts = decode(partitions)
        self._registry.forget(ids, attempts)
        self._server.forget(ids)
        self._shuffle.release(ids, attempts)

    def read_chunk(
        self, result: str, index: int, start: int, end: int, offset: int, max_bytes: int
    ) -> bytes:
        return self._server.read_chunk(
            PartitionId(result, index), IndexRange(start, end), offset, max_bytes
        )

    def drop_blobs(self, keys: list[str]) -> None:
        self._blobs.drop(BlobKey(key) for key in keys)

    def ping(self) -> int:
        return os.getpid()

    def shutdown(self) -> None:
        """Cancel every task, wait a little for them to stop, then stop Spark and remove the
        shuffle directory."""
        self._slots.cancel_all()
        if not self._slots.wait_idle(_SHUTDOWN_WAIT_S):
            self._log.warning("tasks still running at shutdown", tasks=self._slots.running())
        self._slots.close()
        self._spark.stop()
        self._shuffle.close()
        self._log.info("task manager shut down")

    def _report(self, event: Event) -> None:
        self._job_manager.report.remote(encode(event))

    def _fetch_blob(self, key: str) -> bytes:
        return ray.get(self._job_manager.get_blob.remote(key))
