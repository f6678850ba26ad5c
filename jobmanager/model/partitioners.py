"""How an edge's records are distributed: the pattern (pointwise or all-to-all), the kind of
result partition that carries them (blocking or pipelined) and the partitioner that picks each
record's subpartition (forward, rescale, rebalance, broadcast, hash on keys, range on sort keys).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from jobmanager.errors import InvalidEdgeError
from shuffle.keyorder import SortKey

__all__ = ["DistributionPattern", "Partitioner", "PartitionerKind", "ResultPartitionType"]


class DistributionPattern(Enum):
    """How consumer subtasks connect to producer subtasks."""

    POINTWISE = "pointwise"
    ALL_TO_ALL = "all_to_all"


class ResultPartitionType(Enum):
    """The kind of result partition an edge produces, with Flink's properties.

    - ``reconsumable``: the data stays after it is read, so a restarted consumer can read it again
      (a failover need not rerun the producer).
    - ``must_be_pipelined``: producer and consumer must run at the same time, so they belong to one
      pipelined region.
    - ``can_be_pipelined``: the consumer may start before the producer finished (hybrid types).
    - ``released_by_scheduler``: the scheduler, not the upstream task, releases the partition.
    """

    BLOCKING = ("blocking", True, False, False, True)
    PIPELINED = ("pipelined", False, True, True, False)

    def __init__(
        self,
        label: str,
        reconsumable: bool,
        must_be_pipelined: bool,
        can_be_pipelined: bool,
        released_by_scheduler: bool,
    ) -> None:
        self.label = label
        self.is_reconsumable = reconsumable
        self.must_be_pipelined = must_be_pipelined
        self.can_be_pipelined = can_be_pipelined
        self.is_released_by_scheduler = released_by_scheduler

    @classmethod
    def parse(cls, label: str) -> ResultPartitionType:
        for member in cls:
            if member.label == label.lower():
                return member
        raise InvalidEdgeError(
            f"unknown result partition type {label!r}; use blocking or pipelined"
        )


class PartitionerKind(Enum):
    FORWARD = "forward"
    RESCALE = "rescale"
    REBALANCE = "rebalance"
    HASH = "hash"
    BROADCAST = "broadcast"
    RANGE = "range"


@dataclass(frozen=True, slots=True)
class Partitioner:
    """How a producer spreads its records over the subpartitions of its result partition.

    FORWARD and RESCALE are pointwise (a producer feeds a few consumers); REBALANCE, HASH,
    BROADCAST and RANGE are all-to-all. Use the class constants, ``Partitioner.hash("key", ...)``
    or ``Partitioner.range(SortKey.of("key", descending=True), ...)``: a range edge feeds a
    global sort, each consumer one key range, decided at run time from the producers' samples
    (``jobmanager.core.scheduler.adaptive.ranges``).
    """

    kind: PartitionerKind
    keys: tuple[str, ...] = ()
    order: tuple[SortKey, ...] = ()

    FORWARD: ClassVar[Partitioner]
    RESCALE: ClassVar[Partitioner]
    REBALANCE: ClassVar[Partitioner]
    BROADCAST: ClassVar[Partitioner]

    def __post_init__(self) -> None:
        if (self.kind is PartitionerKind.HASH) != bool(self.keys):
            raise InvalidEdgeError("a HASH partitioner needs key columns, and only HASH takes keys")
        if (self.kind is PartitionerKind.RANGE) != bool(self.order):
            raise InvalidEdgeError("a RANGE partitioner needs sort keys, and only RANGE takes them")

    def __setstate__(self, state) -> None:
        """Unpickle, also a partitioner pickled before ``order`` existed (an archived graph)."""
        values = state if isinstance(state, (list, tuple)) else ()
        for name, value in zip(("kind", "keys", "order"), (*values, (), ())[:3]):
            object.__setattr__(self, name, value)

    @staticmethod
    def hash(*keys: str) -> Partitioner:
        return Partitioner(PartitionerKind.HASH, tuple(keys))

    @staticmethod
    def range(*keys: SortKey | str) -> Partitioner:
        """Sort keys in ORDER BY order; a bare name is ascending, nulls first."""
        order = tuple(SortKey.of(k) if isinstance(k, str) else k for k in keys)
        return Partitioner(PartitionerKind.RANGE, (), order)

    @property
    def is_range(self) -> bool:
        return self.kind is PartitionerKind.RANGE

    @property
    def is_pointwise(self) -> bool:
        return self.kind in (PartitionerKind.FORWARD, PartitionerKind.RESCALE)

    @property
    def is_broadcast(self) -> bool:
        return self.kind is PartitionerKind.BROADCAST

    @property
    def distribution_pattern(self) -> DistributionPattern:
        return (
            DistributionPattern.POINTWISE if self.is_pointwise else DistributionPattern.ALL_TO_ALL
        )

    def __str__(self) -> str:
        if self.keys:
            return f"hash({', '.join(self.keys)})"
        if self.order:
            return f"range({', '.join(map(str, self.order))})"
        return self.kind.value


Partitioner.FORWARD = Partitioner(PartitionerKind.FORWARD)
Partitioner.RESCALE = Partitioner(PartitionerKind.RESCALE)
Partitioner.REBALANCE = Partitioner(PartitionerKind.REBALANCE)
Partitioner.BROADCAST = Partitioner(PartitionerKind.BROADCAST)
