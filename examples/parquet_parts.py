"""Generated tables as directories of Parquet part files, written whole or not at all.

Both TPC-H generators (``tpch_data``, numpy drawn, and ``tpch_dbgen``, DuckDB's dbgen) lay out
their tables the same way, so a source splits them the same way:

- each table is a directory of ``part-NNNNN.parquet`` files of about ``file_bytes`` on disk, in
  row groups of about ``row_group_bytes`` on disk (``PartWriter``): a source can split a file
  by row group, or read a whole file in one split when the data volume per task is large;
- a hidden JSON marker in each table's directory (Spark and Tidal's FileSource skip names
  starting with ``_``) records what the table was generated for, so a table already generated
  for the same settings is left alone (``generate_tables``);
- a table is written beside its final place and renamed onto it, so a crash never leaves half
  a table where a reader would take it for whole; generators of one directory take turns (a
  lock on the directory itself), so two runs sharing a cached folder generate it once.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Callable, Iterator, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["FILE_BYTES", "ROW_GROUP_BYTES", "PartWriter", "generate_tables"]

FILE_BYTES = 64 << 20
ROW_GROUP_BYTES = 8 << 20
_SAMPLE_ROWS = 65_536

# Writes the tables it is given (their staging directories, by name) and returns rows by name.
Writer = Callable[[dict[str, Path]], dict[str, int]]


def generate_tables(
    out: Path, marker: str, wanted: dict, writers: Mapping[tuple[str, ...], Writer]
) -> None:
    """For each group of tables (generated together, as orders and their lineitems), run its
    writer unless every table of the group has a ``marker`` equal to ``wanted``; each written
    table gets the marker (with its row count) and is renamed into ``out``. Other content of a
    table's directory is replaced."""
    out.mkdir(parents=True, exist_ok=True)
    lock = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for tables, write in writers.items():
            if all(_marker_matches(out / table / marker, wanted) for table in tables):
                continue
            staging = {table: out / f".{table}.generating" for table in tables}
            for directory in staging.values():
                shutil.rmtree(directory, ignore_errors=True)
                directory.mkdir()
            try:
                rows = write(staging)
            except BaseException:
                for directory in staging.values():
                    shutil.rmtree(directory, ignore_errors=True)
                raise
            for table, directory in staging.items():
                (directory / marker).write_text(json.dumps(wanted | {"rows": rows[table]}))
                shutil.rmtree(out / table, ignore_errors=True)
                os.replace(directory, out / table)
    finally:
        os.close(lock)  # releases the lock


def _marker_matches(path: Path, wanted: dict) -> bool:
    """True if the marker at ``path`` holds every key of ``wanted`` with its value."""
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return {key: found.get(key) for key in wanted} == wanted


class PartWriter:
    """Writes ``part-NNNNN.parquet`` files of about ``file_bytes`` on disk, in row groups of
    about ``row_group_bytes`` on disk: the sizes a FileSource measures its splits in. The rows
    per group come from compressing a sample of the first batch, so they depend on the data
    alone; rows are buffered so row groups stay full across batch boundaries."""

    def __init__(
        self,
        directory: Path,
        schema: pa.Schema,
        file_bytes: int = FILE_BYTES,
        row_group_bytes: int = ROW_GROUP_BYTES,
    ) -> None:
        self._directory = directory
        self._schema = schema
        self._row_group_bytes = row_group_bytes
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._group_rows: int | None = None
        self._groups_per_file = max(1, file_bytes // row_group_bytes)
        self._writer: pq.ParquetWriter | None = None
        self._groups_in_file = 0
        self._files = 0

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self._flush(final=True)
        if self._writer is not None:
            self._writer.close()

    def write(self, table: pa.Table) -> None:
        if self._group_rows is None and table.num_rows:
            self._group_rows = max(1_024, int(self._row_group_bytes / _disk_bytes_per_row(table)))
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self._flush(final=False)

    def _flush(self, final: bool) -> None:
        if not self._pending_rows:
            if final and self._files == 0:
                self._emit(self._schema.empty_table())
            return
        rows = pa.concat_tables(self._pending)
        for group in _slices(rows, self._group_rows or rows.num_rows):
            if group.num_rows < (self._group_rows or 0) and not final:
                self._pending, self._pending_rows = [group], group.num_rows
                return
            self._emit(group)
        self._pending, self._pending_rows = [], 0

    def _emit(self, group: pa.Table) -> None:
        if self._writer is None or self._groups_in_file >= self._groups_per_file:
            if self._writer is not None:
                self._writer.close()
            path = self._directory / f"part-{self._files:05d}.parquet"
            self._writer = pq.ParquetWriter(path, self._schema)
            self._files += 1
            self._groups_in_file = 0
        self._writer.write_table(group, row_group_size=group.num_rows)
        self._groups_in_file += 1


def _disk_bytes_per_row(table: pa.Table) -> float:
    sample = table.slice(0, _SAMPLE_ROWS)
    buffer = pa.BufferOutputStream()
    pq.write_table(sample, buffer)
    return buffer.getvalue().size / sample.num_rows


def _slices(table: pa.Table, rows: int) -> Iterator[pa.Table]:
    for offset in range(0, table.num_rows, rows):
        yield table.slice(offset, rows)
