"""Intermediate results and their partitions: the data one job edge carries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobmanager.core.executiongraph.result_bytes import ResultBytes
from jobmanager.core.executiongraph.states import PartitionState
from jobmanager.model.jobgraph import DistributionPattern, JobEdge
from shuffle.ids import PartitionId

if TYPE_CHECKING:
    from jobmanager.core.executiongraph.groups import ConsumedPartitionGroup, ConsumerVertexGroup
    from jobmanager.core.executiongraph.vertex import ExecutionJobVertex, ExecutionVertex

__all__ = ["IntermediateResult", "IntermediateResultPartition"]


class IntermediateResult:
    """The output of one job edge: one partition per producer subtask.

    How many subpartitions each partition has is settled when the producer is initialised. On a
    static graph it follows the consumer's parallelism (Flink's static mapping). On a dynamic
    graph the consumer's parallelism may be unknown, so each partition writes as many
    subpartitions as the consumer could ever have (its max parallelism; divided among producers
    for a pointwise edge) and each consumer task later reads a range of them (FLIP-187). A
    broadcast result always has one subpartition, which every consumer reads whole.
    """

    __slots__ = ("edge", "producer", "consumer", "partitions", "dynamic_subpartitions", "produced")

    def __init__(
        self, edge: JobEdge, producer: ExecutionJobVertex, consumer: ExecutionJobVertex
    ) -> None:
        self.edge = edge
        self.producer = producer
        self.consumer = consumer
        self.partitions: list[IntermediateResultPartition] = []
        self.dynamic_subpartitions: int | None = None
        self.produced: ResultBytes | None = None

    @property
    def id(self) -> str:
        return self.edge.id

    @property
    def result_type(self):
        return self.edge.result_type

    @property
    def pattern(self) -> DistributionPattern:
        return self.edge.distribution_pattern

    @property
    def is_broadcast(self) -> bool:
        return self.edge.is_broadcast

    def create_partitions(self, dynamic: bool) -> None:
        """Create one partition per producer subtask. ``dynamic``: the graph decides
        parallelisms as it runs, so unless the consumer's is already known, size for its max."""
        producers = self.producer.vertices
        self.partitions = [IntermediateResultPartition(self, v) for v in producers]
        for vertex, partition in zip(producers, self.partitions):
            vertex.produced += (partition,)
        if dynamic and self.consumer.parallelism is None and not self.is_broadcast:
            consumer_max = self.consumer.max_parallelism
            if self.pattern is DistributionPattern.ALL_TO_ALL:
                self.dynamic_subpartitions = consumer_max
            else:
                self.dynamic_subpartitions = -(-consumer_max // len(producers))
        pointwise = self.pattern is DistributionPattern.POINTWISE
        self.produced = ResultBytes(
            len(producers), None if pointwise else self.subpartition_count(0)
        )

    def subpartition_count(self, partition_index: int) -> int:
        if self.is_broadcast:
            return 1
        if self.dynamic_subpartitions is not None:
            return self.dynamic_subpartitions
        consumers = self.consumer.parallelism
        if self.pattern is DistributionPattern.ALL_TO_ALL:
            return consumers
        producers = len(self.partitions)
        if producers >= consumers:
            return 1
        start = (partition_index * consumers + producers - 1) // producers
        end = ((partition_index + 1) * consumers + producers - 1) // producers
        return end - start

    def __repr__(self) -> str:
        return f"IntermediateResult({self.id!r}, {len(self.partitions)} partitions)"


class IntermediateResultPartition:
    """The output one producer subtask writes for one result; consumed through groups.
    ``location``: the TaskManager that wrote it (still its location after that TaskManager
    died, when its file was kept); ``size`` and ``checksum``: its file's, as written (0: not
    known), by which a kept file is recognised."""

    __slots__ = (
        "result",
        "producer",
        "consumer_groups",
        "groups",
        "state",
        "location",
        "size",
        "checksum",
    )

    def __init__(self, result: IntermediateResult, producer: ExecutionVertex) -> None:
        self.result = result
        self.producer = producer
        self.consumer_groups: tuple[ConsumerVertexGroup, ...] = ()
        self.groups: tuple[ConsumedPartitionGroup, ...] = ()
        self.state = PartitionState.PENDING
        self.location: str | None = None
        self.size = 0
        self.checksum = 0

    @property
    def index(self) -> int:
        return self.producer.subtask

    @property
    def id(self) -> PartitionId:
        return PartitionId(self.result.edge.id, self.producer.subtask)

    @property
    def is_finished(self) -> bool:
        return self.state.is_finished

    def mark_finished(self, location: str, size: int = 0, checksum: int = 0) -> None:
        self._move(PartitionState.AVAILABLE)
        self.location = location
        self.size, self.checksum = size, checksum

    def mark_released(self) -> None:
        self._move(PartitionState.RELEASED)

    def mark_lost(self) -> None:
        self._move(PartitionState.LOST)

    def reset(self) -> None:
        self._move(PartitionState.PENDING)
        self.location = None
        self.size = self.checksum = 0

    def restore(
        self, state: PartitionState, location: str | None, size: int = 0, checksum: int = 0
    ) -> None:
        """Take a state from a snapshot (from PENDING, as the partition was created)."""
        self._move(state)
        self.location = location
        self.size, self.checksum = size, checksum

    def _move(self, state: PartitionState) -> None:
        """Change state, keeping every group's count of unfinished partitions in step."""
        was, now = self.state.is_finished, state.is_finished
        self.state = state
        for group in self.groups:
            group.version += 1
        if was and not now:
            for group in self.groups:
                group.partition_reset()
        elif now and not was:
            for group in self.groups:
                group.partition_finished()

    def __repr__(self) -> str:
        return f"IntermediateResultPartition({self.id}, {self.state.value})"
