"""Building task deployment descriptors, with ShuffleDescriptors built once per consumed
partition group.

Every consumer of an all-to-all group reads the same N partitions, so their N ShuffleDescriptors
are built once per group and shared by all N consumers: deploying N consumers costs O(N), not
O(N^2) (Flink 1.14, FLINK-23005). The shell's cache (``jobmanager.runtime.descriptors``) encodes,
compresses and keeps them, and offloads large ones to the blob store, so the descriptor carries
only the key; TaskManagers fetch each key once through their blob cache.
"""

from __future__ import annotations

from typing import Callable, Mapping, Protocol

from jobmanager.core.executiongraph import (
    ConsumedPartitionGroup,
    ExecutionGraph,
    ExecutionVertex,
    IntermediateResultPartition,
)
from jobmanager.core.executiongraph.result_bytes import needs_breakdown
from jobmanager.messages.deployment import (
    InputGateDeploymentDescriptor,
    InputSlice,
    ResultPartitionDeploymentDescriptor,
    ShuffleDescriptors,
    TaskDeploymentDescriptor,
)
from jobmanager.messages.events import TaskManagerRegistered
from shuffle.descriptors import ShuffleDescriptor
from shuffle.paths import partition_path

__all__ = ["DescriptorCache", "TaskDeploymentDescriptorFactory"]


class DescriptorCache(Protocol):
    """Where the ShuffleDescriptors of a consumed partition group come from: built, encoded and
    cached once per group by the shell (``jobmanager.runtime.descriptors``), which also offloads
    large ones to the blob store, an effect the core does not have."""

    def get(
        self,
        group: ConsumedPartitionGroup,
        describe: Callable[[IntermediateResultPartition], ShuffleDescriptor],
    ) -> ShuffleDescriptors: ...


class TaskDeploymentDescriptorFactory:
    """Builds a subtask's deployment descriptor from the execution graph."""

    def __init__(
        self,
        job_id: str,
        graph: ExecutionGraph,
        task_managers: Mapping[str, TaskManagerRegistered],
        cache: DescriptorCache,
        code_keys: Mapping[str, str] | None = None,
        split_target_bytes: int = 16 << 20,
        source_filters: Callable[[str], tuple] = lambda vertex: (),
        source_splits: Callable[[str], tuple] = lambda vertex: (),
        key_ranges: Callable[[str, int], tuple | None] = lambda vertex, subtask: None,
        build_sides: Callable[[str], tuple] = lambda vertex: (),
    ) -> None:
        """``key_ranges``: the keys a subtask of a global sort keeps, (lower, upper), or
        None (``jobmanager.core.scheduler.adaptive.ranges``); ``build_sides``: a vertex's
        joins decided at run time, (join, side broadcast or built on)."""
        self.job_id = job_id
        self.graph = graph
        self.task_managers = task_managers
        self.cache = cache
        self.code_keys = code_keys or {}
        self.split_target_bytes = split_target_bytes
        self.source_filters = source_filters
        self.source_splits = source_splits
        self.key_ranges = key_ranges
        self.build_sides = build_sides

    def describe(self, partition: IntermediateResultPartition) -> ShuffleDescriptor:
        """Where a partition lives: on its producer's TaskManager (alive, or departed with the
        file kept), at the path its attempt wrote (a pipelined producer deployed with its
        consumer has a slot, not yet a location)."""
        task_manager = partition.location or partition.producer.slot.task_manager
        info = self.task_managers[task_manager]
        return ShuffleDescriptor(
            partition.id,
            task_manager,
            info.node,
            partition_path(info.shuffle_root, partition.id, partition.producer.attempt),
            partition.result.subpartition_count(partition.index),
            partition.size,
            partition.checksum,
        )

    def create(
        self, vertex: ExecutionVertex, attempt: int | None = None
    ) -> TaskDeploymentDescriptor:
        """The descriptor of ``attempt`` (default: the subtask's own; a speculative attempt
        has another number)."""
        ejv = vertex.job_vertex
        groups = {g.result.id: g for g in vertex.consumed_groups}
        inputs = []
        for result in ejv.inputs:
            slices = ejv.input_infos[result.id][vertex.subtask].slices
            order = result.edge.partitioner.order
            lower, upper = (self.key_ranges(ejv.name, vertex.subtask) if order else None) or (
                None,
                None,
            )
            inputs.append(
                InputGateDeploymentDescriptor(
                    result.id,
                    slices,
                    self.cache.get(groups[result.id], self.describe),
                    _partitions_with_data(result, slices),
                    order,
                    lower,
                    upper,
                )
            )
        outputs = tuple(
            ResultPartitionDeploymentDescriptor(
                p.result.id,
                p.index,
                p.result.subpartition_count(p.index),
                p.result.edge.partitioner.kind.value,
                p.result.edge.partitioner.keys,
                p.result.edge.dynamic_filtering or "",
                needs_breakdown(p.result, p.index),
                p.result.edge.partitioner.order,
            )
            for p in vertex.produced
        )
        return TaskDeploymentDescriptor(
            self.job_id,
            ejv.name,
            vertex.subtask,
            vertex.attempt if attempt is None else attempt,
            ejv.parallelism,
            tuple(inputs),
            outputs,
            self.code_keys.get(ejv.name, ""),
            self.split_target_bytes,
            self.source_filters(ejv.name),
            self.source_splits(ejv.name),
            self.build_sides(ejv.name),
        )


def _partitions_with_data(result, slices: tuple[InputSlice, ...]) -> tuple[int, ...] | None:
    produced = result.produced
    if produced is None or produced.per_partition is not None or not produced.sparse:
        return None
    kept: list[int] = []
    narrowed = False
    for piece in slices:
        span = range(piece.partitions.start, piece.partitions.end + 1)
        found = produced.partitions_with_data(
            span, range(piece.subpartitions.start, piece.subpartitions.end + 1)
        )
        narrowed = narrowed or found is not None
        kept.extend(span if found is None else found)
    if not narrowed:
        return None
    return tuple(sorted(set(kept))) or (slices[0].partitions.start,)
