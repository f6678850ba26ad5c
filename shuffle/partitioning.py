"""Spreading a producer's rows over the subpartitions of its result partition.

Each partitioner says, per row, which subpartition it goes to; :func:`partition_rows` then
reorders the rows so that each subpartition is one contiguous slice (one stable sort of the
subpartition ids and one ``take``), which is what lets the writer emit the subpartitions back to
back. No partitioner loops over rows in Python.

What each one does with ``num_subpartitions`` (the consumer's max parallelism, FLIP-187):

- :class:`HashPartitioner` -- ``hash(keys) % num_subpartitions`` with the stable hash of
  :mod:`shuffle.hashing`, so equal keys meet in one consumer whatever its parallelism turns out
  to be, whichever machine produced them.
- :class:`RebalancePartitioner` -- round robin over all subpartitions, starting at ``offset``
  (give each producer a different offset, e.g. its subtask index, so small outputs do not all
  land in subpartition 0). Successive writes continue the cycle (``first_row``).
- :class:`RescalePartitioner` -- round robin over a sub-range of subpartitions (the consumers a
  pointwise producer feeds), starting at ``offset`` within the range.
- :class:`ForwardPartitioner` -- every row to one subpartition (the one consumer it feeds).
- :class:`BroadcastPartitioner` -- every row to subpartition 0 of a one-subpartition partition,
  which every consumer reads whole (FLIP-187: a broadcast result has exactly one subpartition).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shuffle.hashing import hash_columns
from shuffle.ranges import IndexRange

__all__ = [
    "BroadcastPartitioner",
    "ForwardPartitioner",
    "HashPartitioner",
    "PartitionedRows",
    "RebalancePartitioner",
    "RescalePartitioner",
    "RowPartitioner",
    "partition_rows",
    "reorder_by_subpartition",
]

Rows = pa.Table | pa.RecordBatch


@runtime_checkable
class RowPartitioner(Protocol):
    def assign(self, rows: Rows, num_subpartitions: int, first_row: int = 0) -> np.ndarray:
        """The subpartition of each row, as an integer array of ``rows.num_rows``.

        ``first_row`` is how many rows the producer wrote before these, so a round robin
        continues across writes."""
        ...


@dataclass(frozen=True, slots=True, eq=False)
class PartitionedRows:
    """Rows reordered so subpartition ``i`` is ``rows[offsets[i]:offsets[i+1]]``."""

    rows: pa.Table
    offsets: np.ndarray  # int64, num_subpartitions + 1 entries

    @property
    def num_subpartitions(self) -> int:
        return len(self.offsets) - 1

    def rows_per_subpartition(self) -> np.ndarray:
        return np.diff(self.offsets)

    def subpartition(self, index: int) -> pa.Table:
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.rows.slice(start, end - start)


def _check_count(num_subpartitions: int) -> None:
    if num_subpartitions < 1:
        raise ValueError(f"a partition needs at least one subpartition, not {num_subpartitions}")


def _id_dtype(num_subpartitions: int) -> type[np.unsignedinteger]:
    """The narrowest id type, for a small ``bincount`` and a fast sort."""
    if num_subpartitions <= 1 << 8:
        return np.uint8
    if num_subpartitions <= 1 << 16:
        return np.uint16
    return np.uint32


@dataclass(frozen=True, slots=True)
class HashPartitioner:
    keys: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("a hash partitioner needs at least one key column")

    def assign(self, rows: Rows, num_subpartitions: int, first_row: int = 0) -> np.ndarray:
        _check_count(num_subpartitions)
        hashes = hash_columns(rows, self.keys)
        dtype = _id_dtype(num_subpartitions)
        if num_subpartitions & (num_subpartitions - 1) == 0:
            # a power of two (a max parallelism usually is): the hash's low bits, its remainder;
            # seven times faster than a 64-bit division per row
            return hashes.astype(dtype) & dtype(num_subpartitions - 1)
        return (hashes % np.uint64(num_subpartitions)).astype(dtype)


def _round_robin(num_rows: int, start: int, first: int, width: int) -> np.ndarray:
    return (np.arange(num_rows, dtype=np.int64) + (start + first) % width) % width


@dataclass(frozen=True, slots=True)
class RebalancePartitioner:
    offset: int = 0

    def assign(self, rows: Rows, num_subpartitions: int, first_row: int = 0) -> np.ndarray:
        _check_count(num_subpartitions)
        ids = _round_robin(rows.num_rows, self.offset, first_row, num_subpartitions)
        return ids.astype(_id_dtype(num_subpartitions))


@dataclass(frozen=True, slots=True)
class RescalePartitioner:
    targets: IndexRange
    offset: int = 0

    def assign(self, rows: Rows, num_subpartitions: int, first_row: int = 0) -> np.ndarray:
        _check_count(num_subpartitions)
        if self.targets.end >= num_subpartitions:
            raise ValueError(
                f"rescale targets {self.targets} exceed {num_subpartitions} subpartitions"
            )
        ids = _round_robin(rows.num_rows, self.offset, first_row, len(self.targets))
        return (ids + self.targets.start).astype(_id_dtype(num_subpartitions))


@dataclass(frozen=True, slots=True)
class ForwardPartitioner:
    subpartition: int = 0

    def target(self, num_subpartitions: int) -> int:
        _check_count(num_subpartitions)
        if not 0 <= self.subpartition < num_subpartitions:
            raise ValueError(
                f"forward target {self.subpartition} outside {num_subpartitions} subpartitions"
            )
        return self.subpartition

    def assign(self, rows: Rows, num_subpartitions: int, first_row: int = 0) -> np.ndarray:
        target = self.target(num_subpartitions)
        return np.full(rows.num_rows, target, dtype=_id_dtype(num_subpartitions))


@dataclass(frozen=True, slots=True)
class BroadcastPartitioner:
    def target(self, num_subpartitions: int) -> int:
        if num_subpartitions != 1:
            raise ValueError(
                f"a broadcast partition has exactly one subpartition, not {num_subpartitions}"
            )
        return 0

    def assign(self, rows: Rows, num_subpartitions: int, first_row: int = 0) -> np.ndarray:
        return np.full(rows.num_rows, self.target(num_subpartitions), dtype=np.uint8)


def partition_rows(
    rows: Rows, partitioner: RowPartitioner, num_subpartitions: int, first_row: int = 0
) -> PartitionedRows:
    """Assign every row a subpartition and reorder the rows so each subpartition is contiguous."""
    table = pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows
    if isinstance(partitioner, (ForwardPartitioner, BroadcastPartitioner)):
        offsets = np.zeros(num_subpartitions + 1, dtype=np.int64)
        offsets[partitioner.target(num_subpartitions) + 1 :] = table.num_rows
        return PartitionedRows(table, offsets)
    ids = partitioner.assign(table, num_subpartitions, first_row)
    return reorder_by_subpartition(table, ids, num_subpartitions)


def reorder_by_subpartition(
    table: pa.Table, subpartition_ids: np.ndarray, num_subpartitions: int
) -> PartitionedRows:
    """Group rows by subpartition id, keeping their order within a subpartition."""
    if len(subpartition_ids) != table.num_rows:
        raise ValueError(f"{len(subpartition_ids)} subpartition ids for {table.num_rows} rows")
    counts = np.bincount(subpartition_ids, minlength=num_subpartitions)
    if len(counts) > num_subpartitions:
        raise ValueError(f"subpartition id {len(counts) - 1} >= {num_subpartitions}")
    offsets = np.zeros(num_subpartitions + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    order = pc.array_sort_indices(pa.array(subpartition_ids))  # stable, a counting sort
    return PartitionedRows(_take(table, order), offsets)


def _take(table: pa.Table, indices: pa.Array) -> pa.Table:
    """``table.take(indices)``, column by column: faster than ``Table.take`` on chunked columns.

    Arrow's take runs on one thread, lets go of the GIL, and on a large table waits mostly on
    memory (a string column's gather dominates); so a large table is taken in as many slices
    of ``indices`` as there are threads, side by side, and each column comes back in that many
    chunks. A small table is not worth the thread hop."""
    columns = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in table.columns]
    if _TAKE_THREADS == 1 or len(indices) < 2 or table.nbytes < _PARALLEL_TAKE_BYTES:
        return pa.Table.from_arrays([c.take(indices) for c in columns], schema=table.schema)
    return _parallel_take(columns, indices, table.schema)


def _parallel_take(columns: list, indices: pa.Array, schema: pa.Schema) -> pa.Table:
    """Each column taken in as many slices of ``indices`` as there are threads."""
    step = -(-len(indices) // _TAKE_THREADS)
    slices = [indices.slice(start, step) for start in range(0, len(indices), step)]
    jobs = [(column, piece) for column in columns for piece in slices]
    pieces = list(_take_pool().map(lambda job: job[0].take(job[1]), jobs))
    return pa.Table.from_arrays(
        [
            pa.chunked_array(pieces[i : i + len(slices)], type=column.type)
            for i, column in zip(range(0, len(pieces), len(slices)), columns)
        ],
        schema=schema,
    )


_PARALLEL_TAKE_BYTES = 16 << 20
_TAKE_THREADS = max(1, min(4, os.cpu_count() or 1))
_take_threads: ThreadPoolExecutor | None = None
_take_threads_lock = threading.Lock()


def _take_pool() -> ThreadPoolExecutor:
    global _take_threads
    with _take_threads_lock:
        if _take_threads is None:
            _take_threads = ThreadPoolExecutor(_TAKE_THREADS, thread_name_prefix="tidal-take")
        return _take_threads
