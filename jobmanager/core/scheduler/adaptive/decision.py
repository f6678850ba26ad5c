"""What the decider reads and what it decides, as plain values."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jobmanager.messages.events import Explanation
from jobmanager.model.joins import JoinInput

__all__ = ["DeciderSettings", "InputStats", "VertexDecision"]


@dataclass(frozen=True)
class InputStats:
    """The bytes one consumed result produced, from its finished partitions.

    ``subpartition_bytes`` sums each subpartition over all partitions (all-to-all);
    ``partition_bytes`` is each partition's total; ``per_partition`` holds each partition's
    per-subpartition bytes for a pointwise result (None for all-to-all). ``join``: the join
    side the consuming edge is, if marked, which tells why a skewed input is not splittable.
    """

    result: str
    pointwise: bool
    broadcast: bool
    num_partitions: int
    subpartition_bytes: np.ndarray
    partition_bytes: np.ndarray
    per_partition: list[np.ndarray] | None = None
    splittable: bool = False
    forward: bool = False
    join: JoinInput | None = None

    @property
    def total(self) -> int:
        return int(self.partition_bytes.sum())

    @staticmethod
    def all_to_all(
        result: str,
        subpartition_bytes,
        partitions: int | None = None,
        splittable: bool = False,
        partition_bytes=None,
    ) -> InputStats:
        """Convenience for tables of numbers: the partitions share the bytes evenly unless
        ``partition_bytes`` says otherwise."""
        sub = np.asarray(subpartition_bytes, dtype=np.int64)
        n = partitions or 1
        if partition_bytes is None:
            per = np.full(n, int(sub.sum()) // n, dtype=np.int64)
            per[: int(sub.sum()) % n] += 1
        else:
            per = np.asarray(partition_bytes, dtype=np.int64)
        return InputStats(result, False, False, n, sub, per, splittable=splittable)

    @staticmethod
    def broadcast_of(result: str, partition_bytes) -> InputStats:
        per = np.asarray(partition_bytes, dtype=np.int64)
        return InputStats(result, False, True, len(per), np.array([per.sum()]), per)

    @staticmethod
    def pointwise_of(result: str, per_partition, forward: bool = False) -> InputStats:
        arrays = [np.asarray(p, dtype=np.int64) for p in per_partition]
        totals = np.array([a.sum() for a in arrays], dtype=np.int64)
        return InputStats(
            result,
            True,
            False,
            len(arrays),
            np.zeros(0, dtype=np.int64),
            totals,
            per_partition=arrays,
            forward=forward,
        )


@dataclass(frozen=True)
class DeciderSettings:
    """``min_data_volume_per_task`` and ``slots``: where both are set, a vertex whose bytes
    fill fewer tasks than the job's slots gets smaller tasks, down to that volume each, so it
    runs on every slot (``spread_over_slots``)."""

    min_parallelism: int = 1
    max_parallelism: int = 128
    data_volume_per_task: int = 16 << 20
    skewed_factor: float = 4.0
    skewed_threshold: int = 256 << 20
    split_skew: bool = True
    min_data_volume_per_task: int | None = None
    slots: int | None = None


@dataclass(frozen=True)
class VertexDecision:
    """``joins``: the run-time decision on the join the vertex runs, if any (``JoinDecision``);
    ``range_bounds``: the keys between the tasks of a global sort (``adaptive.ranges``)."""

    parallelism: int
    input_infos: dict = field(default_factory=dict)
    explanation: Explanation = Explanation("")
    joins: tuple = ()
    range_bounds: tuple = ()
