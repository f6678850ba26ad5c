"""Balanced ranges for a pointwise input, whose consumer count is already fixed.

A pointwise input's partitions are cut into (partition, subpartition) slices, laid out
partition by partition, and greedy-packed into exactly the decided number of consumers (Flink
2.x); when the bytes cannot make that many ranges, the slices are split evenly by count. A
consumer reads the tail of one partition, some whole partitions, and the head of another.
A FORWARD input is never rebalanced: consumer k reads partition k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jobmanager.core.executiongraph.inputs import (
    ExecutionVertexInputInfo,
    ExplicitInputInfo,
    InputSlice,
)
from jobmanager.core.scheduler.adaptive.decision import InputStats
from jobmanager.core.scheduler.adaptive.packing import Items, exact_count_ranges
from jobmanager.messages.codec import register
from shuffle.ranges import IndexRange, even_ranges

__all__ = ["ForwardInputInfo", "balance_pointwise"]


@register
@dataclass(frozen=True, slots=True)
class ForwardInputInfo:
    """Consumer k reads all of partition k."""

    partitions: int
    subpartitions: int

    def __len__(self) -> int:
        return self.partitions

    def __getitem__(self, k: int) -> ExecutionVertexInputInfo:
        if not 0 <= k < self.partitions:
            raise IndexError(k)
        return ExecutionVertexInputInfo.single(
            IndexRange(k, k), IndexRange(0, self.subpartitions - 1)
        )


def balance_pointwise(stats: InputStats, parallelism: int):
    """Input info of ``parallelism`` consumers over ``stats``; and a note on how."""
    arrays = stats.per_partition or []
    if stats.forward:
        return ForwardInputInfo(stats.num_partitions, len(arrays[0]) if arrays else 1), "forward"
    sizes = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    offsets = np.cumsum([0] + [len(a) for a in arrays])
    ranges = exact_count_ranges(Items.of(sizes), parallelism) if len(sizes) else None
    note = "balanced by bytes over (partition, subpartition) slices"
    if ranges is None:
        ranges = even_ranges(len(sizes), parallelism)
        note = "slices split evenly by count"
    infos = tuple(_slices(r, offsets) for r in ranges)
    return ExplicitInputInfo(infos), note


def _slices(flat: IndexRange, offsets: np.ndarray) -> ExecutionVertexInputInfo:
    first = int(np.searchsorted(offsets, flat.start, side="right")) - 1
    last = int(np.searchsorted(offsets, flat.end, side="right")) - 1
    start_sub = flat.start - int(offsets[first])
    end_sub = flat.end - int(offsets[last])
    if first == last:
        return ExecutionVertexInputInfo.single(
            IndexRange(first, first), IndexRange(start_sub, end_sub)
        )
    slices = [
        InputSlice(
            IndexRange(first, first),
            IndexRange(start_sub, int(offsets[first + 1] - offsets[first]) - 1),
        )
    ]
    for p in range(first + 1, last):
        sub = IndexRange(0, int(offsets[p + 1] - offsets[p]) - 1)
        previous = slices[-1]
        if previous.subpartitions == sub and previous.partitions.end == p - 1 and len(slices) > 1:
            slices[-1] = InputSlice(IndexRange(previous.partitions.start, p), sub)
        else:
            slices.append(InputSlice(IndexRange(p, p), sub))
    slices.append(InputSlice(IndexRange(last, last), IndexRange(0, end_sub)))
    return ExecutionVertexInputInfo(tuple(slices))
