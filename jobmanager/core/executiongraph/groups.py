"""ConsumedPartitionGroup and ConsumerVertexGroup: the 1.14 scheduler's answer to O(n^2) edges.

An all-to-all edge between N producers and N consumers is one group of N partitions, which every
consumer shares, and one group of N consumers, which every partition shares: O(n) objects where
one edge per pair would be O(n^2). A pointwise edge makes one small pair of groups per set of
consumers that read the same partitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jobmanager.core.executiongraph.partition import (
        IntermediateResult,
        IntermediateResultPartition,
    )
    from jobmanager.core.executiongraph.vertex import ExecutionVertex

__all__ = ["ConsumedPartitionGroup", "ConsumerVertexGroup"]


class ConsumedPartitionGroup:
    """Partitions of one result that the same consumers read together.

    ``unfinished`` counts partitions whose producer has not finished, so "are all partitions
    finished?" is O(1) however large the group. ``version`` changes whenever any partition of
    the group changes state, so what was derived from the partitions (their encoded shuffle
    descriptors) is known to be stale in O(1).
    """

    __slots__ = ("id", "result", "partitions", "consumers", "unfinished", "version")

    def __init__(
        self, id: int, result: IntermediateResult, partitions: list[IntermediateResultPartition]
    ) -> None:
        self.id = id
        self.result = result
        self.partitions = partitions
        self.consumers: ConsumerVertexGroup | None = None
        self.unfinished = sum(1 for p in partitions if not p.is_finished)
        self.version = 0

    @property
    def result_type(self):
        return self.result.result_type

    @property
    def all_finished(self) -> bool:
        return self.unfinished == 0

    def partition_finished(self) -> None:
        self.unfinished -= 1
        assert self.unfinished >= 0, f"group {self.id} counted more finishes than partitions"

    def partition_reset(self) -> None:
        self.unfinished += 1
        assert self.unfinished <= len(self.partitions), f"group {self.id} over-reset"

    def __len__(self) -> int:
        return len(self.partitions)

    def __repr__(self) -> str:
        return (
            f"ConsumedPartitionGroup({self.id}, {self.result.id}, {len(self.partitions)} "
            f"partitions, {self.unfinished} unfinished)"
        )


class ConsumerVertexGroup:
    """Consumer subtasks that read the same ConsumedPartitionGroup."""

    __slots__ = ("vertices", "consumed")

    def __init__(self, vertices: list[ExecutionVertex], consumed: ConsumedPartitionGroup) -> None:
        self.vertices = vertices
        self.consumed = consumed

    def __len__(self) -> int:
        return len(self.vertices)

    def __iter__(self):
        return iter(self.vertices)

    def __repr__(self) -> str:
        return f"ConsumerVertexGroup({self.consumed.result.id}, {len(self.vertices)} vertices)"
