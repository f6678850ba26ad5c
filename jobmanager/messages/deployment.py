"""Task deployment descriptors: everything a TaskManager receives to run one subtask attempt.

The JobManager's core builds them (``jobmanager.core.deployment``); a TaskManager decodes them
with nothing of the core loaded. The ShuffleDescriptors of a consumed partition group travel
packed (msgpack, lz4) inline or, when large, as a blob key.
"""

from __future__ import annotations

from dataclasses import dataclass

from blob.codec import decode
from jobmanager.messages.codec import register
from shuffle.descriptors import ShuffleDescriptor
from shuffle.keyorder import SortKey
from shuffle.ranges import IndexRange

__all__ = [
    "InputGateDeploymentDescriptor",
    "InputSlice",
    "ResultPartitionDeploymentDescriptor",
    "ShuffleDescriptors",
    "TaskDeploymentDescriptor",
    "decode_shuffle_descriptors",
]

register(IndexRange)
register(SortKey)


@register
@dataclass(frozen=True, slots=True)
class InputSlice:
    """A range of partitions and, from each of them, a range of subpartitions."""

    partitions: IndexRange
    subpartitions: IndexRange

    @property
    def size(self) -> int:
        return len(self.partitions) * len(self.subpartitions)


@register
@dataclass(frozen=True, slots=True)
class ShuffleDescriptors:
    """The compressed descriptors of one consumed partition group: inline, or a blob key."""

    group: int
    version: int
    inline: bytes = b""
    blob_key: str = ""

    @property
    def offloaded(self) -> bool:
        return bool(self.blob_key)


@register
@dataclass(frozen=True, slots=True)
class InputGateDeploymentDescriptor:
    """One input of a task: which slices of which partitions to read, and where they are.
    ``partitions``, when given, are the only partitions of the slices that hold any data for
    them; the others are skipped (a task always reads at least one, for the schema).
    ``key_order``, for a range-partitioned input: the sort keys; the task keeps only the rows
    whose encoded key is at least ``lower_key`` and below ``upper_key`` (None: unbounded), its
    share of the chunks it reads, some of which straddle a bound."""

    result: str
    slices: tuple[InputSlice, ...]
    descriptors: ShuffleDescriptors
    partitions: tuple[int, ...] | None = None
    key_order: tuple[SortKey, ...] = ()
    lower_key: bytes | None = None
    upper_key: bytes | None = None


@register
@dataclass(frozen=True, slots=True)
class ResultPartitionDeploymentDescriptor:
    """One output of a task: the partition it writes and how to split it. ``filter_column``:
    the edge carries dynamic filtering, so report the distinct values of that column.
    ``breakdown``: report bytes per subpartition even when there are many (else a total will
    do; see ``ProducedPartition``). ``order``: the sort keys of a range partitioner."""

    result: str
    index: int
    num_subpartitions: int
    partitioner: str
    keys: tuple[str, ...]
    filter_column: str = ""
    breakdown: bool = True
    order: tuple[SortKey, ...] = ()


@register
@dataclass(frozen=True, slots=True)
class TaskDeploymentDescriptor:
    """Everything one subtask attempt needs. ``code_key`` is the blob holding the vertex's
    cloudpickled code; its sources split their files for ``split_target_bytes`` per split and
    keep only the partitions ``source_filters`` allow; ``source_splits``, per source, names the
    blob of the splits the JobManager listed ("": the task lists them itself).
    ``build_sides``: (join id, side) of each join the vertex runs that the JobManager decided
    at run time, the side broadcast or built on: the task hints Spark to build on it."""

    job_id: str
    vertex: str
    subtask: int
    attempt: int
    parallelism: int
    inputs: tuple[InputGateDeploymentDescriptor, ...]
    outputs: tuple[ResultPartitionDeploymentDescriptor, ...]
    code_key: str = ""
    split_target_bytes: int = 16 << 20
    source_filters: tuple = ()
    source_splits: tuple[str, ...] = ()
    build_sides: tuple[tuple[str, str], ...] = ()


def decode_shuffle_descriptors(payload: bytes) -> list[ShuffleDescriptor]:
    return [ShuffleDescriptor.from_list(fields) for fields in decode(payload)]
