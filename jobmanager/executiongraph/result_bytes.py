"""The bytes a result's partitions produced, as the adaptive scheduler needs them.

All-to-all results keep a running sum per subpartition and a total per partition: never
producers x subpartitions numbers, which at 10,000 x 10,000 would be 800 MB. Pointwise results
keep each partition's per-subpartition bytes, which are few (the consumer's max parallelism
spread over the producers). Broadcast results keep one number per partition: the bytes produced
once, not once per consumer.

For all-to-all results a partition that wrote to few of its subpartitions also keeps which ones
(Spark's map statuses do the same), so a consumer is not sent to read a thousand empty ranges:
nothing is kept for the common dense case.

A partition is counted once, from its first finished attempt. A rerun of a deterministic
producer writes the same bytes; a nondeterministic one may differ, which affects only how
evenly consumers are balanced, never what they read.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ResultBytes"]


class ResultBytes:
    """``subpartitions`` None: a pointwise result, whose partitions are kept one by one."""

    __slots__ = ("subpartition_sums", "partition_totals", "per_partition", "counted", "sparse")

    def __init__(self, partitions: int, subpartitions: int | None) -> None:
        self.subpartition_sums = np.zeros(subpartitions or 0, dtype=np.int64)
        self.partition_totals = np.zeros(partitions, dtype=np.int64)
        self.per_partition: list[np.ndarray] | None = None
        if subpartitions is None:
            self.per_partition = [np.zeros(0, dtype=np.int64)] * partitions
        self.counted = np.zeros(partitions, dtype=bool)
        self.sparse: dict[int, np.ndarray] = {}

    def record(self, partition: int, counts: np.ndarray) -> None:
        if self.counted[partition]:
            return
        if self.per_partition is not None:
            self.per_partition[partition] = np.array(counts, dtype=np.int64)
        elif len(counts) != len(self.subpartition_sums):
            raise ValueError(
                f"partition {partition} reported {len(counts)} subpartitions, "
                f"expected {len(self.subpartition_sums)}"
            )
        else:
            self.subpartition_sums += counts
            written = np.flatnonzero(counts)
            if len(written) <= len(counts) // 8:
                self.sparse[partition] = written.astype(np.int32)
        self.counted[partition] = True
        self.partition_totals[partition] = int(counts.sum())

    @property
    def total(self) -> int:
        return int(self.partition_totals.sum())

    @property
    def complete(self) -> bool:
        return bool(self.counted.all())

    def partitions_with_data(self, partitions: range, subpartitions: range) -> list[int] | None:
        """Which of ``partitions`` wrote anything to ``subpartitions``; None when all may have
        (dense partitions are not tracked, so they always count)."""
        if not self.sparse:
            return None
        low, high = subpartitions.start, subpartitions.stop
        kept = []
        for p in partitions:
            written = self.sparse.get(p)
            if written is None:
                kept.append(p)
                continue
            i = int(np.searchsorted(written, low))
            if i < len(written) and written[i] < high:
                kept.append(p)
        return None if len(kept) == len(partitions) else kept
