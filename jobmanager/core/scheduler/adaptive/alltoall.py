"""Balanced ranges for all-to-all inputs: consumers get even bytes, not even subpartition
counts, and a skewed subpartition of a splittable input is cut across several consumers.

Every subpartition is an item sized by its bytes summed over the inputs. A skewed subpartition
(bytes above ``max(median x skewed-factor, skewed-threshold)``) of an input marked splittable
becomes several items instead, one per range of that input's partitions of about the target
size; each piece is read together with the whole matching subpartition of the other inputs,
which a consumer holding several pieces reads once (Flink 2.x's skewed join optimisation).
Only one input is cut per subpartition: cutting two would need every pair of pieces, which a
consumer holding some of them could not tell apart. A skewed subpartition of an input that is
not splittable stays whole, and the explanation says so; where the input is a join's side
left whole because the join's own task relies on its hashing (FLIP-475's skip under strategy
``auto``), it says that ``forced`` would cut it.

The bytes of one subpartition in one partition are not kept (that would be producers x
subpartitions numbers); a piece's bytes are estimated from its partitions' share of the
input's total, which is exact when producers spread the hot key alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from jobmanager.core.executiongraph.inputs import (
    ExecutionVertexInputInfo,
    ExplicitInputInfo,
    InputSlice,
    SubpartitionRangesInputInfo,
)
from jobmanager.core.scheduler.adaptive.decision import DeciderSettings, InputStats
from jobmanager.core.scheduler.adaptive.packing import Items, balanced_ranges
from shuffle.ranges import IndexRange, even_ranges

__all__ = ["AllToAllRanges", "balance_all_to_all", "median_at_least_one"]


@dataclass(frozen=True)
class AllToAllRanges:
    parallelism: int
    infos: dict
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Piece:
    subpartition: int
    split_input: int  # index into the inputs, -1 when the subpartition is not cut
    partitions: IndexRange | None


def median_at_least_one(values: np.ndarray) -> int:
    ordered = np.sort(values)
    n = len(ordered)
    middle = ordered[n // 2] if n % 2 else (int(ordered[n // 2 - 1]) + int(ordered[n // 2])) // 2
    return max(int(middle), 1)


def balance_all_to_all(
    inputs: list[InputStats],
    parallelism: int,
    min_parallelism: int,
    max_parallelism: int,
    limit: int,
    settings: DeciderSettings,
) -> AllToAllRanges:
    counts = {len(i.subpartition_bytes) for i in inputs}
    if len(counts) != 1:
        return _even(inputs, parallelism, ("inputs differ in subpartitions: even split",))
    pieces, items, notes = _items(inputs, settings)
    ranges, used_limit = balanced_ranges(items, limit, min_parallelism, max_parallelism)
    if ranges is None:
        note = f"no limit gives {min_parallelism}..{max_parallelism} balanced ranges: even split"
        return _even(inputs, parallelism, notes + (note,))
    notes += (f"balanced by bytes into {len(ranges)} ranges (limit {used_limit} bytes)",)
    if all(p.split_input < 0 for p in pieces):
        cuts = tuple(r.start for r in ranges) + (ranges[-1].end + 1,)
        infos = {i.result: SubpartitionRangesInputInfo(i.num_partitions, cuts) for i in inputs}
        return AllToAllRanges(len(ranges), infos, notes)
    infos = {
        stats.result: ExplicitInputInfo(
            tuple(_consumer_info(pieces, r, j, stats.num_partitions) for r in ranges)
        )
        for j, stats in enumerate(inputs)
    }
    return AllToAllRanges(len(ranges), infos, notes)


def _even(inputs: list[InputStats], parallelism: int, notes: tuple[str, ...]) -> AllToAllRanges:
    infos = {}
    for stats in inputs:
        ranges = even_ranges(len(stats.subpartition_bytes), parallelism)
        cuts = tuple(r.start for r in ranges) + (ranges[-1].end + 1,)
        infos[stats.result] = SubpartitionRangesInputInfo(stats.num_partitions, cuts)
    return AllToAllRanges(parallelism, infos, notes)


def _skew(inputs: list[InputStats], settings: DeciderSettings):
    """Per input: its skewed subpartitions where they may be cut (else None), the bytes a
    piece of one aims at, and notes on skew that may not be cut."""
    skewed: list[np.ndarray | None] = []
    targets: list[int] = []
    notes: list[str] = []
    for stats in inputs:
        sub = stats.subpartition_bytes
        threshold = max(
            int(median_at_least_one(sub) * settings.skewed_factor), settings.skewed_threshold
        )
        is_skewed = sub > threshold
        usable = settings.split_skew and stats.splittable and is_skewed.any()
        skewed.append(is_skewed if usable else None)
        if settings.split_skew and not stats.splittable and is_skewed.any():
            notes.append(_not_cut(stats, np.flatnonzero(is_skewed)))
        normal = sub[~is_skewed]
        mean = int(normal.sum() // len(normal)) if len(normal) else 0
        targets.append(max(settings.data_volume_per_task, mean))
    return skewed, targets, notes


def _cut(stats: InputStats, s: int, j: int, target: int, total: int) -> tuple[list, list, list]:
    """Subpartition ``s`` of input ``j`` cut into partition ranges of about ``target`` bytes:
    the pieces, with their full and distinct bytes (the other inputs' bytes of ``s``, of
    ``total``, are read with every piece, counted once in distinct)."""
    pieces: list[_Piece] = []
    full: list[int] = []
    distinct: list[int] = []
    estimate = _partition_share(stats, s)
    ranges = _partition_ranges(estimate, target)
    others = total - int(stats.subpartition_bytes[s])
    for k, r in enumerate(ranges):
        piece = int(estimate[r.start : r.end + 1].sum())
        pieces.append(_Piece(s, j, r))
        full.append(piece + others)
        distinct.append(piece if k else piece + others)
    return pieces, full, distinct


def _items(inputs: list[InputStats], settings: DeciderSettings):
    sums = np.sum([i.subpartition_bytes for i in inputs], axis=0)
    skewed, targets, notes = _skew(inputs, settings)
    if all(mask is None for mask in skewed):
        return [_Piece(s, -1, None) for s in range(len(sums))], Items.of(sums), tuple(notes)
    pieces: list[_Piece] = []
    full: list[int] = []
    distinct: list[int] = []
    for s in range(len(sums)):
        candidates = [j for j, mask in enumerate(skewed) if mask is not None and mask[s]]
        if not candidates:
            pieces.append(_Piece(s, -1, None))
            full.append(int(sums[s]))
            distinct.append(int(sums[s]))
            continue
        j = max(candidates, key=lambda c: int(inputs[c].subpartition_bytes[s]))
        stats = inputs[j]
        cut, cut_full, cut_distinct = _cut(stats, s, j, targets[j], int(sums[s]))
        pieces += cut
        full += cut_full
        distinct += cut_distinct
        notes.append(
            f"skewed subpartition {s} of {stats.result!r} "
            f"({int(stats.subpartition_bytes[s])} bytes) cut into {len(cut)} pieces"
        )
    items = Items(np.array(full, dtype=np.int64), np.array(distinct, dtype=np.int64))
    return pieces, items, tuple(notes)


def _not_cut(stats: InputStats, skewed: np.ndarray) -> str:
    """Why an input's skewed subpartitions stay whole. A join side its kind lets be cut whose
    consumer still relies on the join's hashing is FLIP-475's skip under strategy auto: the
    planner left an aggregate, a window or a join on the keys in the join's task; forced would
    have put it behind a hash exchange, and this side would be cut."""
    which = ", ".join(str(s) for s in skewed[:_NAMED]) + (
        f" and {len(skewed) - _NAMED} more" if len(skewed) > _NAMED else ""
    )
    largest = int(stats.subpartition_bytes[skewed].max())
    many = len(skewed) > 1
    head = (
        f"skewed subpartition{'s' if many else ''} {which} of {stats.result!r} "
        f"({'the largest ' if many else ''}{largest} bytes) not cut: "
    )
    mark = stats.join
    if mark is not None and _JOIN_CUTS[mark.side](mark.kind) and not mark.redistributable:
        return head + (
            "the join's task relies on its hash partitioning (skipped under strategy "
            "auto; forced puts what relies on it behind a hash exchange and cuts)"
        )
    return head + "the input is not splittable"


# the join kinds that let a side be cut, each piece read with the other side's matching rows
_JOIN_CUTS = {
    "left": lambda kind: kind in ("inner", "left", "semi", "anti"),
    "right": lambda kind: kind in ("inner", "right"),
}
_NAMED = 5  # skewed subpartitions named in a note; the rest are counted


def _partition_share(stats: InputStats, subpartition: int) -> np.ndarray:
    total = int(stats.partition_bytes.sum())
    hot = int(stats.subpartition_bytes[subpartition])
    if total == 0:
        return np.zeros(stats.num_partitions, dtype=np.int64)
    return (stats.partition_bytes.astype(np.float64) * hot / total).astype(np.int64)


def _partition_ranges(estimate: np.ndarray, target: int) -> list[IndexRange]:
    """Greedy over partitions: a piece grows while it stays under the target."""
    ranges, start, size = [], 0, 0
    for p, value in enumerate(estimate.tolist()):
        if p == start or size + value < target:
            size += value
        else:
            ranges.append(IndexRange(start, p - 1))
            start, size = p, value
    ranges.append(IndexRange(start, len(estimate) - 1))
    return ranges


def _held(held: list[_Piece], s: int, j: int, whole: IndexRange) -> IndexRange:
    """The partitions of subpartition ``s`` of input ``j`` the pieces ``held`` cover."""
    mine = [p.partitions for p in held if p.subpartition == s and p.split_input == j]
    return IndexRange(mine[0].start, mine[-1].end) if mine else whole


def _consumer_info(
    pieces: list[_Piece], items: IndexRange, j: int, partitions: int
) -> ExecutionVertexInputInfo:
    """What one consumer, holding ``items``, reads of input ``j``: a whole-partition block of
    subpartitions, with the first and last subpartition possibly narrowed to the pieces of
    them it holds. Each partition's subpartitions stay one contiguous range."""
    whole = IndexRange(0, partitions - 1)
    first_s, last_s = pieces[items.start].subpartition, pieces[items.end].subpartition
    held = pieces[items.start : items.end + 1]
    first, last = _held(held, first_s, j, whole), _held(held, last_s, j, whole)
    if first_s == last_s:
        return ExecutionVertexInputInfo.single(first, IndexRange(first_s, first_s))
    points = sorted({0, partitions, first.start, first.end + 1, last.start, last.end + 1})
    return ExecutionVertexInputInfo(_slices(points, first_s, first, last_s, last))


def _slices(
    points: list[int], first_s: int, first: IndexRange, last_s: int, last: IndexRange
) -> tuple[InputSlice, ...]:
    """Between consecutive ``points`` (partition bounds), the subpartitions read: from the
    first subpartition where its held partitions cover the span (else the next), to the last
    likewise; consecutive spans reading the same subpartitions merged."""
    slices: list[InputSlice] = []
    for x, y in pairwise(points):
        span = IndexRange(x, y - 1)
        low = first_s if first.start <= x and y - 1 <= first.end else first_s + 1
        high = last_s if last.start <= x and y - 1 <= last.end else last_s - 1
        if low > high:
            continue
        sub = IndexRange(low, high)
        if slices and slices[-1].subpartitions == sub and slices[-1].partitions.end == x - 1:
            slices[-1] = InputSlice(IndexRange(slices[-1].partitions.start, y - 1), sub)
        else:
            slices.append(InputSlice(span, sub))
    return tuple(slices)
