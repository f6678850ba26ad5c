"""Writing a sink's part files in a task: whole or not at all, each attempt its own, laid out as
Spark's ``df.write`` lays them out (``jobmanager.model.sink_layout``).

- Unpartitioned: one file, ``part-<subtask>-<attempt>.<ext>``, even with no rows (a Parquet
  file then carries the schema; a CSV file holds the header, or nothing).
- Partitioned: the rows split by the distinct values of the partition columns, one file per
  partition directory the task has rows for, the partition columns dropped from it (Spark
  refuses to partition by every column; so does this). No rows, no data file. Then the marker
  ``_tidal-done-<subtask>-<attempt>``, a JSON list of the files written, relative to the
  staging directory: the commit's proof that the attempt finished.
- CSV: ``pyarrow.csv.write_csv``, comma-separated, strings quoted, NULL as an empty field, a
  header line only if asked (Spark's default: none). Dates are ISO (``2024-01-02``, as Spark
  writes them). Timestamps are written as ISO 8601 with a ``T`` (Spark's writer, unlike Arrow's
  default ``2024-01-02 03:04:05.000000``): ``2024-01-02T03:04:05.123`` without a zone,
  ``...Z`` for one with a zone (in UTC), with the fraction Spark writes (milliseconds) or
  microseconds where the value has them, so nothing is lost. Spark reads them back as
  timestamps (``inferSchema``), Arrow too (``column_types``).
"""

from __future__ import annotations

import json
import os
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from jobmanager.model import storage
from jobmanager.model.operators import ParquetSink, part_file, staging_dir
from jobmanager.model.sink_layout import done_marker, partition_dir

__all__ = ["partitions", "write_part_file", "write_sink"]


def write_sink(table: pa.Table, sink: ParquetSink, job_id: str, subtask: int, attempt: int) -> int:
    """Write this attempt's output of ``sink``; return how many data files."""
    if not sink.partition_by:
        write_part_file(
            table, part_file(sink, job_id, subtask, attempt), sink.format, sink.csv_header
        )
        return 1
    written = []
    for directory, rows in partitions(table, sink.partition_by):
        path = part_file(sink, job_id, subtask, attempt, directory)
        write_part_file(rows, path, sink.format, sink.csv_header)
        written.append(f"{directory}/{path.rsplit('/', 1)[-1].rsplit(os.sep, 1)[-1]}")
    marker = storage.join(staging_dir(sink, job_id), done_marker(subtask, attempt))
    _write_whole(marker, lambda target: _write_text(target, json.dumps(written)))
    return len(written)


def partitions(table: pa.Table, columns: tuple[str, ...]) -> list[tuple[str, pa.Table]]:
    """The rows of each partition, by its directory (``col=value/...``), the partition columns
    dropped; in directory order. NULL and the empty string share Hive's default partition, as
    in Spark."""
    names = [_column(table, c) for c in columns]
    if len(names) == len(table.column_names):
        raise ValueError(
            f"cannot partition by every column ({', '.join(names)}): the files would have none left"
        )
    if table.num_rows == 0:
        return []
    indexed = table.select(names).append_column(
        "__row", pa.array(range(table.num_rows), pa.int64())
    )
    groups = indexed.group_by(names, use_threads=False).aggregate([("__row", "list")])
    rows: dict[str, list] = {}
    keys = [groups.column(n).to_pylist() for n in names]
    for i, members in enumerate(groups.column("__row_list").to_pylist()):
        directory = partition_dir(tuple(names), tuple(k[i] for k in keys))
        rows.setdefault(directory, []).extend(members)
    data = table.drop_columns(names)
    return [(d, data.take(pa.array(sorted(rows[d]), pa.int64()))) for d in sorted(rows)]


def _column(table: pa.Table, name: str) -> str:
    """The table's column ``name``, matched without case if not exactly (Spark resolves
    ``partitionBy`` names so by default)."""
    if name in table.column_names:
        return name
    matches = [c for c in table.column_names if c.lower() == name.lower()]
    if len(matches) != 1:
        raise ValueError(
            f"partition column {name!r} is not among the columns {', '.join(table.column_names)}"
        )
    return matches[0]


def write_part_file(
    table: pa.Table, path: str, format: str = "parquet", csv_header: bool = False
) -> None:
    """Write ``table`` to ``path`` whole or not at all. On a local disk: a hidden temporary file
    (ignored by readers and by the sink's commit) renamed into place; on an object store: one
    object, which appears only once its upload completes."""
    if format == "csv":
        _write_whole(
            path,
            lambda target: pacsv.write_csv(
                _spark_csv_values(table), target, pacsv.WriteOptions(include_header=csv_header)
            ),
        )
    else:
        _write_whole(path, lambda target: pq.write_table(table, target))


def _write_whole(path: str, write) -> None:
    if not storage.is_local(path):
        fs, key = storage.filesystem(path)
        with fs.open(key, "wb") as file:
            write(file)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = os.path.join(os.path.dirname(path), f".{uuid.uuid4().hex}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _write_text(target, text: str) -> None:
    if isinstance(target, str):
        with open(target, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        target.write(text.encode())


def _spark_csv_values(table: pa.Table) -> pa.Table:
    """Timestamp columns as the ISO 8601 text Spark's CSV writer uses (see the module's
    docstring); every other column as Arrow writes it."""
    for i, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            table = table.set_column(i, field.name, _iso_timestamps(table.column(i), field.type))
    return table


def _iso_timestamps(column, type_: pa.TimestampType):
    """``2024-01-02T03:04:05.123`` (``...Z`` in UTC for a zoned type): Arrow's ``%S`` carries
    the fraction of the unit, milliseconds where no value has finer, else microseconds."""
    zone = None if type_.tz is None else "UTC"
    micros = pc.cast(column, pa.timestamp("us", zone))
    millis = pc.cast(micros, pa.timestamp("ms", zone), safe=False)
    exact = pc.all(pc.equal(pc.cast(millis, pa.timestamp("us", zone)), micros)).as_py()
    text = pc.strftime(millis if exact is not False else micros, format="%Y-%m-%dT%H:%M:%S")
    return text if zone is None else pc.binary_join_element_wise(text, "Z", "")
