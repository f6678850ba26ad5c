"""How a data file is cut into splits: a Parquet file into runs of whole row groups of about
the target size in the bytes a task reads of them, a CSV file into near-equal byte ranges
(aligned to lines when read, ``jobmanager.model.splits``).

Connector code: it reads Parquet footers; the pure scheduling core never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.model.splits import FileSplit

if TYPE_CHECKING:
    from jobmanager.model.sources import DataFile

__all__ = ["csv_splits", "parquet_splits"]


def parquet_splits(
    file: DataFile, target: int, columns: Sequence[str] | None
) -> tuple[list[FileSplit], pa.Schema]:
    """Consecutive row groups grouped up to about ``target`` bytes of the ``columns`` read (a
    row group is never cut), and the file's schema."""
    fs, path = fsspec.core.url_to_fs(file.path)
    with fs.open(path, "rb") as handle:
        metadata = pq.read_metadata(handle)
    schema = metadata.schema.to_arrow_schema()
    wanted = None if columns is None else frozenset(columns)
    groups = [
        _row_group_range(metadata.row_group(i), wanted) for i in range(metadata.num_row_groups)
    ]
    batches: list[list[int]] = []
    batch_bytes = 0
    for index, (_, length) in enumerate(groups):
        if not batches or batch_bytes + length > target:
            batches.append([])
            batch_bytes = 0
        batches[-1].append(index)
        batch_bytes += length
    return [
        FileSplit(
            file.path,
            "parquet",
            groups[batch[0]][0],
            sum(groups[i][1] for i in batch),
            tuple(batch),
            file.partition_values,
        )
        for batch in batches
    ], schema


def _row_group_range(row_group: Any, wanted: frozenset[str] | None) -> tuple[int, int]:
    """A row group's first byte, and the compressed size on disk of the column chunks a task
    reads of it: those of the ``wanted`` columns (a nested column's chunks, ``name.field``,
    count for it), all of them for None."""
    columns = [row_group.column(i) for i in range(row_group.num_columns)]
    starts = [
        c.dictionary_page_offset
        if c.has_dictionary_page and c.dictionary_page_offset
        else c.data_page_offset
        for c in columns
    ]
    read = [c for c in columns if wanted is None or _read_column(c.path_in_schema, wanted)]
    return min(starts, default=0), sum(c.total_compressed_size for c in read)


def _read_column(path: str, wanted: frozenset[str]) -> bool:
    return path in wanted or any(path.startswith(name + ".") for name in wanted)


def csv_splits(file: DataFile, target: int) -> list[FileSplit]:
    """``ceil(size / target)`` byte ranges of near-equal size; an empty file has none."""
    count = -(-file.size // target)
    bounds = [file.size * i // count for i in range(count + 1)] if count else []
    return [
        FileSplit(file.path, "csv", lo, hi - lo, (), file.partition_values)
        for lo, hi in zip(bounds, bounds[1:])
    ]
