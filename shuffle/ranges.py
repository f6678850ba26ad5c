"""Index ranges: which subpartitions (or partitions) of a result one consumer task reads.

Ranges are inclusive at both ends, as in Flink's ``IndexRange``: ``IndexRange(3, 5)`` is indices
3, 4 and 5. A consumer reads one contiguous range of subpartitions from each partition of its
input, which is what lets a producer write without knowing its consumer's parallelism (FLIP-187's
flexible subpartition mapping) and a partition file serve a range with one read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IndexRange", "even_ranges"]


@dataclass(frozen=True, slots=True)
class IndexRange:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid index range [{self.start}, {self.end}]")

    def __len__(self) -> int:
        return self.end - self.start + 1

    def __iter__(self):
        return iter(range(self.start, self.end + 1))

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self.start <= index <= self.end

    def __str__(self) -> str:
        return f"[{self.start}, {self.end}]"


def even_ranges(num_indices: int, num_consumers: int) -> list[IndexRange]:
    """Split ``num_indices`` indices evenly over consumers: consumer k gets
    ``[k*P/N, (k+1)*P/N - 1]`` (FLIP-187). Needs ``num_consumers <= num_indices``."""
    if num_consumers < 1 or num_consumers > num_indices:
        raise ValueError(
            f"cannot split {num_indices} indices evenly over {num_consumers} consumers"
        )
    return [
        IndexRange(k * num_indices // num_consumers, (k + 1) * num_indices // num_consumers - 1)
        for k in range(num_consumers)
    ]
