"""Which slices of its inputs each consumer subtask reads.

A consumer subtask reads, from one input, one or more slices: a range of partitions and, from
each of them, a range of subpartitions. Most consumers read one slice; a consumer that takes a
piece of a skewed subpartition reads it from a narrower range of partitions.

Static mappings are computed on demand from the two parallelisms, so a 10,000-consumer vertex
costs nothing to describe; the adaptive scheduler stores the ranges it decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from jobmanager.messages.codec import register
from jobmanager.messages.deployment import InputSlice
from jobmanager.model.jobgraph import DistributionPattern
from shuffle.ranges import IndexRange

__all__ = [
    "BroadcastInputInfo",
    "ExecutionVertexInputInfo",
    "ExplicitInputInfo",
    "FormulaInputInfo",
    "InputSlice",
    "JobVertexInputInfo",
    "PartitionRangesInputInfo",
    "SubpartitionRangesInputInfo",
    "WholeInputInfo",
]


@register
@dataclass(frozen=True, slots=True)
class ExecutionVertexInputInfo:
    """What one consumer subtask reads of one input."""

    slices: tuple[InputSlice, ...]

    @staticmethod
    def single(partitions: IndexRange, subpartitions: IndexRange) -> ExecutionVertexInputInfo:
        return ExecutionVertexInputInfo((InputSlice(partitions, subpartitions),))

    @property
    def partition_span(self) -> IndexRange:
        """The smallest partition range covering every slice; the edge is connected by it."""
        return IndexRange(
            min(s.partitions.start for s in self.slices), max(s.partitions.end for s in self.slices)
        )


class JobVertexInputInfo(Protocol):
    """The input info of every subtask of a consumer, for one input."""

    def __len__(self) -> int: ...

    def __getitem__(self, subtask: int) -> ExecutionVertexInputInfo: ...


@register
@dataclass(frozen=True, slots=True)
class ExplicitInputInfo:
    """Input infos decided one by one (pointwise balancing, skewed subpartitions split)."""

    infos: tuple[ExecutionVertexInputInfo, ...]

    def __len__(self) -> int:
        return len(self.infos)

    def __getitem__(self, subtask: int) -> ExecutionVertexInputInfo:
        return self.infos[subtask]


@register
@dataclass(frozen=True, slots=True)
class SubpartitionRangesInputInfo:
    """All-to-all: consumer k reads every partition's subpartitions ``[cuts[k], cuts[k+1]-1]``;
    N+1 numbers describe N consumers, so a 10,000-wide decision stays small."""

    num_partitions: int
    cuts: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.cuts) - 1

    def __getitem__(self, k: int) -> ExecutionVertexInputInfo:
        subpartitions = _between_cuts(self.cuts, k)  # an IndexError before anything else
        return ExecutionVertexInputInfo.single(_all_of(self.num_partitions), subpartitions)


@register
@dataclass(frozen=True, slots=True)
class BroadcastInputInfo:
    """Every consumer reads the single subpartition of every partition."""

    num_partitions: int
    consumers: int

    def __len__(self) -> int:
        return self.consumers

    def __getitem__(self, k: int) -> ExecutionVertexInputInfo:
        _check_consumer(k, self.consumers)
        return ExecutionVertexInputInfo.single(_all_of(self.num_partitions), IndexRange(0, 0))


@register
@dataclass(frozen=True, slots=True)
class WholeInputInfo:
    """Every consumer reads all subpartitions of all partitions: the side of a join turned
    into a broadcast join at run time, whose producers wrote one subpartition per possible
    consumer (not the single one of a broadcast edge) before anyone knew it would be sent
    whole."""

    num_partitions: int
    num_subpartitions: int
    consumers: int

    def __len__(self) -> int:
        return self.consumers

    def __getitem__(self, k: int) -> ExecutionVertexInputInfo:
        _check_consumer(k, self.consumers)
        return ExecutionVertexInputInfo.single(
            _all_of(self.num_partitions), _all_of(self.num_subpartitions)
        )


@register
@dataclass(frozen=True, slots=True)
class PartitionRangesInputInfo:
    """Consumer k reads all subpartitions of partitions ``[cuts[k], cuts[k+1]-1]``: whole
    producer outputs, as Spark's local shuffle reader reads the other side of a join that
    became a broadcast join, where the rows need not meet their key's partners any more.
    N+1 numbers describe N consumers."""

    num_subpartitions: int
    cuts: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.cuts) - 1

    def __getitem__(self, k: int) -> ExecutionVertexInputInfo:
        return ExecutionVertexInputInfo.single(
            _between_cuts(self.cuts, k), _all_of(self.num_subpartitions)
        )


@dataclass(frozen=True, slots=True, eq=False)
class FormulaInputInfo:
    """Flink's static mapping of a result onto ``consumers`` subtasks, computed when asked.

    All-to-all: every consumer reads all partitions and an even share of the subpartitions
    (a broadcast consumer reads the single subpartition). Pointwise with S producers and T
    consumers: for S >= T consumer k reads partitions ``[k*S/T, (k+1)*S/T)`` whole; for S < T
    partition j is shared by consumers ``[(j*T+S-1)/S, ((j+1)*T+S-1)/S)``, which split its
    subpartitions evenly.
    """

    pattern: DistributionPattern
    broadcast: bool
    producers: int
    consumers: int
    subpartition_count: Callable[[int], int]

    def __len__(self) -> int:
        return self.consumers

    def __getitem__(self, k: int) -> ExecutionVertexInputInfo:
        _check_consumer(k, self.consumers)
        s, t = self.producers, self.consumers
        if self.pattern is DistributionPattern.ALL_TO_ALL:
            if self.broadcast:
                sub = IndexRange(0, 0)
            else:
                sub = _even_share(k, t, self.subpartition_count(0))
            return ExecutionVertexInputInfo.single(_all_of(s), sub)
        if s >= t:
            start, end = k * s // t, (k + 1) * s // t
            return ExecutionVertexInputInfo.single(
                IndexRange(start, end - 1), _all_of(self.subpartition_count(start))
            )
        j = k * s // t
        first = (j * t + s - 1) // s
        sharing = ((j + 1) * t + s - 1) // s - first
        sub = _even_share(k - first, sharing, self.subpartition_count(j))
        return ExecutionVertexInputInfo.single(IndexRange(j, j), sub)

    def __repr__(self) -> str:
        return f"FormulaInputInfo({self.pattern.value}, {self.producers} -> {self.consumers})"


def _check_consumer(k: int, consumers: int) -> None:
    """A consumer's index past the last is an IndexError, as a sequence's is."""
    if not 0 <= k < consumers:
        raise IndexError(k)


def _all_of(count: int) -> IndexRange:
    """Every index of ``count`` partitions or subpartitions."""
    return IndexRange(0, count - 1)


def _between_cuts(cuts: tuple[int, ...], k: int) -> IndexRange:
    """Consumer k's indices, from its cut to the next one's; N+1 cuts describe N consumers."""
    _check_consumer(k, len(cuts) - 1)
    return IndexRange(cuts[k], cuts[k + 1] - 1)


def _even_share(k: int, consumers: int, subpartitions: int) -> IndexRange:
    return IndexRange(k * subpartitions // consumers, (k + 1) * subpartitions // consumers - 1)
