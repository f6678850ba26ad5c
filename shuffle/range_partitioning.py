"""The Arrow side of a range exchange: producers cut sorted chunks, consumers keep their range.

A producer of a range-partitioned result sorts its output by the sort keys, cuts it into chunks
of about equal rows (at most one per subpartition, so every chunk holds rows) and writes chunk
``j`` to subpartition ``j``; it reports each chunk's lowest key, and the highest key of all,
encoded (``shuffle.keyorder``). The JobManager picks the consumers' bounds from those samples
and sends each consumer the chunks its range overlaps; a chunk straddling a bound is read by
both consumers, and each keeps only the rows of its own range, so no row is kept twice.

The one order everything is cut by is the encoding's, whatever the column types. Arrow's own
sort gives it, each key's nulls placed first by a marker of their own, for every type but a
floating-point key holding NaN (Arrow puts NaN beside the nulls; the encoding, as Spark, above
every number, before nulls or after them): such rows are sorted by their encoded bytes. Only
the bounds are encoded otherwise, since encoding a key is Python's work a row (43 ms for 18 K
rows of four keys, as TPC-H q16's final sort has, against 8 ms).
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
    indices = _arrow_order(table, order)
    if indices is None:
        indices = pc.sort_indices(encode_keys(table, order))
    chunks = min(max_chunks, rows)
    firsts = [(j * rows + chunks - 1) // chunks for j in range(chunks)] + [rows - 1]
    sampled = table.take(indices.take(pa.array(firsts, pa.int64())))
    return SortedChunks(table.take(indices), chunks, tuple(encode_keys(sampled, order).to_pylist()))


def _arrow_order(table: pa.Table, order: tuple[SortKey, ...]) -> pa.Array | None:
    """The rows' indices in the encoding's order by Arrow's sort (see the module docstring);
    None where Arrow's order is not the encoding's (NaN in a floating-point key) or Arrow
    cannot sort a key's type."""
    columns, keys = {}, []
    for position, key in enumerate(order):
        column = table.column(key.column)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
            return None
        if column.null_count:
            columns[f"valid{position}"] = pc.is_valid(column)
            keys.append((f"valid{position}", "ascending" if key.nulls_first else "descending"))
        columns[f"value{position}"] = column
        keys.append((f"value{position}", "descending" if key.descending else "ascending"))
    try:
        return pc.sort_indices(pa.table(columns), sort_keys=keys)
    except pa.ArrowNotImplementedError:
        return None


@dataclass(frozen=True, slots=True)
class ChunkPartitioner:
    """Row ``i`` of ``rows`` sorted rows goes to chunk ``i * chunks // rows``: the chunk
    ``j`` begins at row ``ceil(j * rows / chunks)``, as ``sort_into_chunks`` samples it."""

    chunks: int
    rows: int

    def assign(
        self, rows: pa.Table | pa.RecordBatch, num_subpartitions: int, first_row: int = 0
    ) -> np.ndarray:
        if self.chunks > num_subpartitions:
            raise ValueError(f"{self.chunks} chunks for {num_subpartitions} subpartitions")
        positions = np.arange(first_row, first_row + rows.num_rows, dtype=np.int64)
        return positions * self.chunks // max(self.rows, 1)


def keep_key_range(
    table: pa.Table, order: tuple[SortKey, ...], lower: bytes | None, upper: bytes | None
) -> pa.Table:
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
