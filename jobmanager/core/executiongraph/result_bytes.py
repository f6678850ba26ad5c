"""The bytes a result's partitions produced, as the adaptive scheduler needs them.

All-to-all results keep a running sum per subpartition and a total per partition: never
producers x subpartitions numbers, which at 10,000 x 10,000 would be 800 MB. Pointwise results
keep each partition's per-subpartition bytes, which are few (the consumer's max parallelism
spread over the producers). Broadcast results keep one number per partition: the bytes produced
once, not once per consumer.

For all-to-all results a partition that wrote to few of its subpartitions also keeps which ones
(Spark's map statuses do the same), so a consumer is not sent to read a thousand empty ranges:
nothing is kept for the common dense case.

Recording a report costs what the task wrote, not the consumer's parallelism: a sparse report
lists only the subpartitions written to, and a task whose consumer's ranges are already fixed
sends only its total when it has many subpartitions (``needs_breakdown``), so a dense 100,000 x
100,000 all-to-all is 100,000 numbers, not 10^10. Such a result has no per-subpartition sums
(``has_breakdown`` False); nothing schedules by them.

A partition is counted once, from its first finished attempt. A rerun of a deterministic
producer writes the same bytes; a nondeterministic one may differ, which affects only how
evenly consumers are balanced, never what they read.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BREAKDOWN_UP_TO", "ResultBytes", "needs_breakdown", "report_problem"]

_MAX_BYTES = 2**63 - 1  # what the scheduler's int64 sums hold

BREAKDOWN_UP_TO = 1024
"""A task reports bytes per subpartition for at most this many subpartitions when nothing
needs them (the job report charts them); beyond it, only when the scheduler does."""


def needs_breakdown(result, partition_index: int) -> bool:
    """Whether the producer of this partition must report its bytes per subpartition: the
    consumer's parallelism is still to be decided from them (its subpartitions were sized for
    its max parallelism), or there are few enough to keep for the report anyway."""
    return (
        result.dynamic_subpartitions is not None
        or result.subpartition_count(partition_index) <= BREAKDOWN_UP_TO
    )


class ResultBytes:
    """``subpartitions`` None: a pointwise result, whose partitions are kept one by one."""

    __slots__ = (
        "subpartition_sums",
        "partition_totals",
        "per_partition",
        "counted",
        "sparse",
        "has_breakdown",
        "recorded",
        "_index",
    )

    def __init__(self, partitions: int, subpartitions: int | None) -> None:
        self.subpartition_sums = np.zeros(subpartitions or 0, dtype=np.int64)
        self.partition_totals = np.zeros(partitions, dtype=np.int64)
        self.per_partition: list[np.ndarray] | None = None
        if subpartitions is None:
            self.per_partition = [np.zeros(0, dtype=np.int64)] * partitions
        self.counted = np.zeros(partitions, dtype=bool)
        self.sparse: dict[int, np.ndarray] = {}
        self.has_breakdown = True
        self.recorded = 0  # bytes of every partition counted so far, a Python int: exact
        self._index: tuple | None = None

    def record(self, partition: int, report) -> None:
        """Count a ``ProducedPartition`` (its first finished attempt only), in O(what the
        report holds)."""
        if self.counted[partition]:
            return
        n = report.num_subpartitions
        if self.per_partition is not None:
            self.per_partition[partition] = np.array(report.counts(), dtype=np.int64)
        elif n != len(self.subpartition_sums):
            raise ValueError(
                f"partition {partition} reported {n} subpartitions, "
                f"expected {len(self.subpartition_sums)}"
            )
        elif report.is_sparse:
            written = report.written_indices()
            self.subpartition_sums[written] += report.values()
            self.sparse[partition] = written.astype(np.int32)
            self._index = None
        elif not report.has_breakdown:
            self.has_breakdown = False
        else:
            counts = report.values()
            self.subpartition_sums += counts
            if np.count_nonzero(counts) <= n // 8:  # a dense report of a sparse partition
                self.sparse[partition] = np.flatnonzero(counts).astype(np.int32)
                self._index = None
        self.counted[partition] = True
        self.partition_totals[partition] = report.total
        self.recorded += report.total

    @property
    def total(self) -> int:
        return int(self.partition_totals.sum())

    def export(self) -> tuple:
        """Everything recorded, as bytes, for a snapshot."""
        return (
            self.subpartition_sums.tobytes(),
            self.partition_totals.tobytes(),
            self.counted.tobytes(),
            None if self.per_partition is None else tuple(a.tobytes() for a in self.per_partition),
            tuple((p, written.tobytes()) for p, written in self.sparse.items()),
            self.has_breakdown,
        )

    def restore(self, image: tuple) -> None:
        sums, totals, counted, per_partition, sparse, self.has_breakdown = image
        self.recorded = int(np.frombuffer(totals, dtype=np.int64).sum())
        self.subpartition_sums = np.frombuffer(sums, dtype=np.int64).copy()
        self.partition_totals = np.frombuffer(totals, dtype=np.int64).copy()
        self.counted = np.frombuffer(counted, dtype=bool).copy()
        if per_partition is not None:
            self.per_partition = [np.frombuffer(a, dtype=np.int64).copy() for a in per_partition]
        self.sparse = {p: np.frombuffer(w, dtype=np.int32).copy() for p, w in sparse}
        self._index = None

    @property
    def complete(self) -> bool:
        return bool(self.counted.all())

    def partitions_with_data(self, partitions: range, subpartitions: range) -> list[int] | None:
        """Which of ``partitions`` wrote anything to ``subpartitions``; None when all may have
        (dense partitions are not tracked, so they always count). O(log n + answer), from an
        index by subpartition built once, so deploying N consumers stays O(N)."""
        if not self.sparse:
            return None
        dense, by_subpartition, subpartition_of = self._sparse_index()
        low = int(np.searchsorted(subpartition_of, subpartitions.start, side="left"))
        high = int(np.searchsorted(subpartition_of, subpartitions.stop, side="left"))
        found = np.union1d(dense, by_subpartition[low:high])
        first, last = partitions.start, partitions.stop
        kept = found[(found >= first) & (found < last)]
        return None if len(kept) == len(partitions) else kept.tolist()

    def _sparse_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._index is None:
            sparse = set(self.sparse)
            dense = np.array([p for p in range(len(self.counted)) if p not in sparse], np.int64)
            pairs = [(int(s), p) for p, written in self.sparse.items() for s in written]
            pairs.sort()
            subpartition_of = np.array([s for s, _ in pairs], dtype=np.int64)
            by_subpartition = np.array([p for _, p in pairs], dtype=np.int64)
            self._index = (dense, by_subpartition, subpartition_of)
        return self._index


def report_problem(vertex, produced) -> str:
    """What is wrong with a finished subtask's byte report (``TaskFinished.produced``), if
    anything: a task that reports what it did not produce cannot have run correctly."""
    expected = {p.result.id: p for p in vertex.produced}
    reported = [r.result for r in produced]
    if sorted(reported) != sorted(expected):
        return f"reported results {reported}, expected {sorted(expected)}"
    for report in produced:
        problem = _count_problem(report, expected[report.result]) or _shape_problem(
            report, expected[report.result]
        )
        if problem:
            return problem
    return ""


def _count_problem(report, partition) -> str:
    """A negative byte count, or one that would overflow the result's total."""
    if (report.total_bytes is not None and report.total_bytes < 0) or (
        len(report.values()) and int(report.values().min()) < 0
    ):
        return f"reported a negative byte count for {report.result}"
    if partition.result.produced.recorded + report.total > _MAX_BYTES:
        return (
            f"reported {report.total:,} bytes for {report.result}, which would take its "
            f"total past 2^63 - 1 bytes: a count is wrong"
        )
    return ""


def _shape_problem(report, partition) -> str:
    """A breakdown missing where needed, or not of the partition's subpartitions."""
    result = partition.result
    if not report.has_breakdown and needs_breakdown(result, partition.index):
        return (
            f"reported only the total of {report.result}, whose bytes per subpartition are needed"
        )
    if report.is_sparse and len(report.written_indices()) != len(report.values()):
        return f"reported {len(report.values())} byte counts for {len(report.written_indices())} subpartitions of {report.result}"
    if result.produced.per_partition is not None:
        return ""
    wanted = result.subpartition_count(partition.index)
    if report.num_subpartitions != wanted:
        return (
            f"reported {report.num_subpartitions} subpartitions for {report.result}, "
            f"expected {wanted}"
        )
    if report.is_sparse and _outside(report.written_indices(), wanted):
        return f"reported a subpartition of {report.result} outside 0..{wanted - 1}"
    return ""


def _outside(indices, count: int) -> bool:
    return bool(len(indices)) and (int(indices.max()) >= count or int(indices.min()) < 0)
