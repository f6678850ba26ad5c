"""Packing a sequence of sized items into contiguous ranges: the arithmetic of balanced input
ranges. Pure functions of numbers.

Greedy packing walks the items and starts a new range when adding the next item would pass the
limit (a range always takes at least one item). Each item has a *full* size, counted when it
opens a range, and a *distinct* size, counted when it joins one: they differ for the pieces of a
split skewed subpartition, whose matching data from the other inputs is read once per consumer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shuffle.ranges import IndexRange

__all__ = ["Items", "balanced_ranges", "count_ranges", "exact_count_ranges", "greedy_ranges"]


@dataclass(frozen=True)
class Items:
    full: np.ndarray
    distinct: np.ndarray

    @staticmethod
    def of(sizes) -> Items:
        array = np.asarray(sizes, dtype=np.int64)
        return Items(array, array)

    def __len__(self) -> int:
        return len(self.full)

    @property
    def total(self) -> int:
        return int(self.full.sum())


def _starts(items: Items, limit: int) -> list[int]:
    """Where each greedy range starts."""
    n = len(items)
    cumulative = np.cumsum(items.distinct)
    full, starts, i = items.full, [], 0
    while i < n:
        starts.append(i)
        budget = limit - int(full[i]) + int(cumulative[i])
        j = int(np.searchsorted(cumulative, budget, side="right")) - 1
        i = max(j, i) + 1
    return starts


def count_ranges(items: Items, limit: int) -> int:
    return len(_starts(items, limit))


def greedy_ranges(items: Items, limit: int) -> list[IndexRange]:
    starts = _starts(items, limit)
    ends = starts[1:] + [len(items)]
    return [IndexRange(s, e - 1) for s, e in zip(starts, ends)]


def _find_min_limit(predicate, low: int, high: int) -> int:
    """Smallest limit in [low, high] for which ``predicate`` holds (it holds at ``high``)."""
    while low < high:
        middle = (low + high) // 2
        if predicate(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _find_max_limit(predicate, low: int, high: int) -> int:
    """Largest limit in [low, high] for which ``predicate`` holds (it holds at ``low``)."""
    while low < high:
        middle = (low + high + 1) // 2
        if predicate(middle):
            low = middle
        else:
            high = middle - 1
    return low


def balanced_ranges(
    items: Items, limit: int, min_count: int, max_count: int
) -> tuple[list[IndexRange] | None, int]:
    """Greedy ranges under ``limit``; if their number falls outside [min_count, max_count],
    bisect for the limit giving the closest legal number (for too few, the most even limit
    giving it). Returns the ranges, or None if no limit gives a legal number, and the limit
    used."""
    if len(items) == 0:
        return None, limit
    count = count_ranges(items, limit)
    if count < min_count:
        low = max(1, int(items.full.min()))
        if count_ranges(items, low) < min_count:
            return None, limit
        limit = _find_max_limit(lambda x: count_ranges(items, x) >= min_count, low, limit)
        reached = count_ranges(items, limit)
        limit = _find_min_limit(lambda x: count_ranges(items, x) == reached, low, limit)
    elif count > max_count:
        high = max(limit, items.total)
        limit = _find_min_limit(lambda x: count_ranges(items, x) <= max_count, limit, high)
    ranges = greedy_ranges(items, limit)
    if not min_count <= len(ranges) <= max_count:
        return None, limit
    return ranges, limit


def exact_count_ranges(items: Items, count: int) -> list[IndexRange] | None:
    """Exactly ``count`` ranges as even in bytes as greedy packing allows: the smallest limit
    giving at most ``count`` ranges, then the balanced adjustment; None if impossible."""
    if count > len(items):
        return None
    ranges, _ = balanced_ranges(items, max(1, int(items.full.min())), count, count)
    return ranges
