"""Test doubles and builders for the task runtime: a reporter that records, blobs in a dict,
and deployment descriptors built the way the JobManager's factory builds them."""

from __future__ import annotations

import threading
import zlib
from pathlib import Path

import cloudpickle

from blob import BlobCache, BlobKey
from blob.codec import encode
from jobmanager.messages.deployment import (
    InputGateDeploymentDescriptor,
    InputSlice,
    ResultPartitionDeploymentDescriptor,
    ShuffleDescriptors,
    TaskDeploymentDescriptor,
)
from jobmanager.model.config import Configuration
from jobmanager.model.operators import VertexCode
from shuffle import IndexRange, PartitionId, ShuffleDescriptor, ShuffleDirectory
from shuffle.paths import partition_path
from taskmanager.blobs import FetchedBlobs
from taskmanager.registry import PartitionRegistry
from taskmanager.runner import TaskEnvironment
from taskmanager.spark import SparkSessionProvider

JOB = "job-1"


class RecordingReporter:
    """Collects reported events, in order."""

    def __init__(self) -> None:
        self.events: list = []
        self._lock = threading.Lock()

    def __call__(self, event) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, kind: type) -> list:
        with self._lock:
            return [event for event in self.events if isinstance(event, kind)]


class DictBlobs:
    """The JobManager's blob store as a dict, counting fetches."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.fetches: list[str] = []

    def put(self, data: bytes) -> str:
        key = BlobKey.of(data).digest
        self.data[key] = data
        return key

    def fetch(self, key: str) -> bytes:
        self.fetches.append(key)
        return self.data[key]

    def code(self, operator, sources=()) -> str:
        """The key of a vertex's cloudpickled code."""
        return self.put(cloudpickle.dumps(VertexCode(operator, tuple(sources))))


def environment(
    root: Path,
    blobs: DictBlobs,
    *,
    task_manager_id: str = "tm-a",
    node_id: str = "node-a",
    spark: SparkSessionProvider | None = None,
    fetch_chunk=None,
) -> tuple[TaskEnvironment, RecordingReporter]:
    reporter = RecordingReporter()
    env = TaskEnvironment(
        task_manager_id=task_manager_id,
        node_id=node_id,
        shuffle=ShuffleDirectory(root),
        registry=PartitionRegistry(task_manager_id),
        blobs=BlobCache(FetchedBlobs(blobs.fetch, "test blobs")),
        spark=spark or SparkSessionProvider(1, root / ".spark", Configuration()),
        report=reporter,
        fetch_chunk=fetch_chunk,
        wall_clock_ms=lambda: 1_700_000_000_000,
    )
    return env, reporter


def output(
    result: str,
    num_subpartitions: int,
    partitioner: str = "hash",
    keys=("key",),
    index: int = 0,
    filter_column: str = "",
) -> ResultPartitionDeploymentDescriptor:
    keys = tuple(keys) if partitioner == "hash" else ()
    return ResultPartitionDeploymentDescriptor(
        result, index, num_subpartitions, partitioner, keys, filter_column
    )


def descriptor(
    env: TaskEnvironment, result: str, index: int, num_subpartitions: int, attempt: int = 0
) -> ShuffleDescriptor:
    """Where ``env``'s TaskManager wrote partition ``result#index``, as the JobManager says."""
    pid = PartitionId(result, index)
    return ShuffleDescriptor(
        pid,
        env.task_manager_id,
        env.node_id,
        partition_path(str(env.shuffle.root), pid, attempt),
        num_subpartitions,
    )


def gate(
    result: str, descriptors, slices, offload_to: DictBlobs | None = None
) -> InputGateDeploymentDescriptor:
    """An input gate; ``slices`` are ((first partition, last), (first subpartition, last))."""
    payload = encode([d.to_list() for d in descriptors])
    version = zlib.crc32(payload)  # as the JobManager's group version: new content, new version
    shipped = (
        ShuffleDescriptors(0, version, blob_key=offload_to.put(payload))
        if offload_to
        else ShuffleDescriptors(0, version, inline=payload)
    )
    pieces = tuple(InputSlice(IndexRange(*p), IndexRange(*s)) for p, s in slices)
    return InputGateDeploymentDescriptor(result, pieces, shipped)


def tdd(
    vertex: str,
    code_key: str = "",
    *,
    subtask: int = 0,
    attempt: int = 0,
    parallelism: int = 1,
    inputs=(),
    outputs=(),
    split_target_bytes: int = 16 << 20,
    source_filters=(),
) -> TaskDeploymentDescriptor:
    return TaskDeploymentDescriptor(
        JOB,
        vertex,
        subtask,
        attempt,
        parallelism,
        tuple(inputs),
        tuple(outputs),
        code_key,
        split_target_bytes,
        tuple(source_filters),
    )
