"""The Arrow side of a range exchange: producers cut sorted chunks, consumers keep their range.

A producer of a range-partitioned result sorts its output by the sort keys, cuts it into chunks
of about equal rows (at most one per subpartition, so every chunk holds rows) and writes chunk
``j`` to subpartition ``j``; it reports each chunk's lowest key, and the highest key of all,
encoded (``shuffle.keyorder``). The JobManager picks the consumers' bounds from those samples
and sends each consumer the chunks its range overlaps; a chunk straddling a bound is read by
both consumers, and each keeps only the rows of its own range, so no row is kept twice.

Sorting by the encoded bytes, not by Arrow's own order, keeps the chunks consistent with the
bounds whatever the column types: the one order everything is cut by is the encoding's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shuffle.keyorder import SortKey, encode_column

__all__ = ["ChunkPartitioner", "SortedChunks", "encode_keys", "keep_key_range", "sort_into_chunks"]


def encode_keys(table: pa.Table, order: tuple[SortKey, ...]) -> pa.BinaryArray:
    """Every row's encoded key. Dates, times and timestamps compare as their integers (days,
    microseconds...) within one column type, which every producer of a result shares."""
    columns = [encode_column(_python_values(table.column(key.column)), key) for key in order]
    if not columns:
        return pa.array([b""] * table.num_rows, type=pa.binary())
    keys = columns[0] if len(columns) == 1 else [b"".join(parts) for parts in zip(*columns)]
    return pa.array(keys, type=pa.binary())


def _python_values(column: pa.ChunkedArray) -> list:
    kind = column.type
    if pa.types.is_temporal(kind):
        width = pa.int32() if pa.types.is_date32(kind) or pa.types.is_time32(kind) else pa.int64()
        column = column.cast(width)
    elif pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
    elif pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        column = column.cast(pa.string())
    return column.to_pylist()


@dataclass(frozen=True, slots=True, eq=False)
class SortedChunks:
    """A table sorted by its keys, cut into ``chunks`` runs of about equal rows. ``bounds``:
    each chunk's lowest key, then the highest key of all (``chunks + 1`` keys; none when the
    table has no rows)."""

    table: pa.Table
    chunks: int
    bounds: tuple[bytes, ...]

    def partitioner(self) -> ChunkPartitioner:
        return ChunkPartitioner(self.chunks, self.table.num_rows)


def sort_into_chunks(table: pa.Table, order: tuple[SortKey, ...], max_chunks: int) -> SortedChunks:
    rows = table.num_rows
    if rows == 0:
        return SortedChunks(table, 0, ())
    keys = encode_keys(table, order)
    indices = pc.sort_indices(keys)
    chunks = min(max_chunks, rows)
    firsts = [(j * rows + chunks - 1) // chunks for j in range(chunks)] + [rows - 1]
    bounds = tuple(keys[int(indices[i].as_py())].as_py() for i in firsts)
    return SortedChunks(table.take(indices), chunks, bounds)


@dataclass(frozen=True, slots=True)
class ChunkPartitioner:
    """Row ``i`` of ``rows`` sorted rows goes to chunk ``i * chunks // rows``: the chunk
    ``j`` begins at row ``ceil(j * rows / chunks)``, as ``sort_into_chunks`` samples it."""

    chunks: int
    rows: int

    def assign(self, rows: pa.Table | pa.RecordBatch, num_subpartitions: int,
               first_row: int = 0) -> np.ndarray:  # fmt: skip
        if self.chunks > num_subpartitions:
            raise ValueError(f"{self.chunks} chunks for {num_subpartitions} subpartitions")
        positions = np.arange(first_row, first_row + rows.num_rows, dtype=np.int64)
        return positions * self.chunks // max(self.rows, 1)


def keep_key_range(table: pa.Table, order: tuple[SortKey, ...], lower: bytes | None,
                   upper: bytes | None) -> pa.Table:  # fmt: skip
    """The rows whose key is in ``[lower, upper)`` (None: unbounded on that side)."""
    if table.num_rows == 0 or (lower is None and upper is None):
        return table
    keys = encode_keys(table, order)
    mask = None
    if lower is not None:
        mask = pc.greater_equal(keys, pa.scalar(lower, pa.binary()))
    if upper is not None:
        below = pc.less(keys, pa.scalar(upper, pa.binary()))
        mask = below if mask is None else pc.and_(mask, below)
    return table.filter(mask)
