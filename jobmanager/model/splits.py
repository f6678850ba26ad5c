"""A file source's splits: what one is, how they are shared among subtasks, and how a task
reads its own.

CSV splits are byte ranges, aligned to lines when read (Hadoop's rule, restated):

* a split owns every line whose first byte lies in ``[start, start + length)``; a line that
  crosses the split's end is read to its end (or the end of the file), and a split that starts
  mid-line skips to the byte after the next newline, so every line is read exactly once;
* the header is the file's first line: the split starting at byte 0 owns it and drops it, and
  every split reads it separately to name its columns (``column_names`` means no header line);
* columns are strings unless ``csv_options["column_types"]`` says otherwise (Spark's default),
  so every split of a file agrees on the schema;
* newlines inside quoted values cannot be found from the middle of a file: with
  ``newlines_in_values=True`` each CSV file is one split.

Connector code: it may use the file system; the pure scheduling core never imports it.
"""

from __future__ import annotations

import heapq
import io
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import fsspec
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from jobmanager.errors import TidalError
from jobmanager.messages.codec import register
from jobmanager.model.storage import is_local

__all__ = [
    "FileSplit",
    "SourceError",
    "WHOLE_FILES_SLACK",
    "assign_splits",
    "in_whole_waves",
    "read_splits",
    "spark_reads_files",
    "whole_file_parallelism",
    "whole_files_fit",
]

CSV_PARSE_KEYS = {
    "delimiter",
    "quote_char",
    "double_quote",
    "escape_char",
    "newlines_in_values",
    "ignore_empty_lines",
}
CSV_CONVERT_KEYS = {
    "column_types",
    "null_values",
    "true_values",
    "false_values",
    "decimal_point",
    "strings_can_be_null",
    "quoted_strings_can_be_null",
    "timestamp_parsers",
}
PartitionValues = tuple[tuple[str, str], ...]
# How much more than an even share of the bytes a subtask reading whole files may read: at
# scale 10 of TPC-H, reading a share of files' row groups through Arrow and writing it again
# for Spark was 17 % of a lineitem scan's task time (11.5 s of 66 s).
WHOLE_FILES_SLACK = 1.2


class SourceError(TidalError):
    """A source cannot be enumerated or read; names the source and the path at fault."""

    def __init__(self, source: str, path: str | None, problem: str) -> None:
        self.source = source
        self.path = path
        super().__init__(f"{source}: {path}: {problem}" if path else f"{source}: {problem}")


@register
@dataclass(frozen=True, slots=True)
class FileSplit:
    """One unit of reading: whole Parquet row groups, or a byte range of a CSV file.

    Registered as a message, so split assignments can travel in deployment descriptors."""

    path: str
    format: str
    start: int
    length: int
    row_groups: tuple[int, ...] = ()
    partition_values: PartitionValues = ()


def in_whole_waves(tasks: int, slots: int | None) -> int:
    """``tasks`` rounded down to a multiple of ``slots`` when it is more than ``slots``: the
    last wave is as full as the first, and no task gets more than twice its share."""
    if not slots or tasks <= slots:
        return tasks
    return tasks - tasks % slots


def assign_splits(splits: Sequence[FileSplit], parallelism: int) -> list[list[FileSplit]]:
    """Balance splits over subtasks by bytes: biggest first to the least-loaded subtask (ties
    to the lowest index). Splits Spark can read as whole files (``spark_reads_files``) go as
    whole files instead where that loads no subtask much over an even share
    (``whole_files_fit``): a Spark task then reads its files itself, where a share of a file's
    row groups comes through Arrow and is written again for Spark. Each subtask keeps its
    splits in enumeration order, so consecutive row groups of a file are read front to back;
    every split is assigned exactly once."""
    if parallelism < 1:
        raise ValueError(f"parallelism must be at least 1, not {parallelism}")
    whole = spark_reads_files(splits) and whole_files_fit(splits, parallelism)
    units = list(_by_file(splits).values()) if whole else [[i] for i in range(len(splits))]
    owner = [0] * len(splits)
    for subtask, unit in _balanced(splits, units, parallelism):
        for index in unit:
            owner[index] = subtask
    assigned: list[list[FileSplit]] = [[] for _ in range(parallelism)]
    for index, split in enumerate(splits):
        assigned[owner[index]].append(split)
    return assigned


def spark_reads_files(splits: Sequence[FileSplit]) -> bool:
    """Whether a Spark task given these splits as whole files reads them itself: local Parquet
    files without partition values (which Spark would type differently)."""
    return bool(splits) and all(
        s.format == "parquet" and not s.partition_values and is_local(s.path) for s in splits
    )


def whole_files_fit(splits: Sequence[FileSplit], parallelism: int) -> bool:
    """Whether the splits' files, each whole to one of ``parallelism`` subtasks, balanced by
    bytes, load none more than ``WHOLE_FILES_SLACK`` times an even share, and leave none
    empty."""
    files = _by_file(splits)
    total = sum(split.length for split in splits)
    if len(files) < parallelism or not total:
        return False
    most = max(sum(splits[i].length for i in unit) for unit in files.values())
    if most * parallelism > WHOLE_FILES_SLACK * total:
        return False  # one file alone is over the limit
    loads = [0] * parallelism
    for subtask, unit in _balanced(splits, list(files.values()), parallelism):
        loads[subtask] += sum(splits[i].length for i in unit)
    return max(loads) * parallelism <= WHOLE_FILES_SLACK * total


def whole_file_parallelism(splits: Sequence[FileSplit], parallelism: int, slots: int | None) -> int:
    """``parallelism``, or where its subtasks would read shares of files Spark could read whole
    (``spark_reads_files``), the most subtasks down to half as many,
    in whole waves of ``slots`` or one file each (a last wave not quite full costs less than
    reading through Arrow), whose subtasks read whole files evenly; ``parallelism`` if none
    does."""
    if not spark_reads_files(splits) or _whole(assign_splits(splits, parallelism)):
        return parallelism
    files = len(_by_file(splits))
    for fewer in range(min(parallelism, files), (parallelism + 1) // 2 - 1, -1):
        whole_waves = in_whole_waves(fewer, slots) == fewer or fewer == files
        if whole_waves and whole_files_fit(splits, fewer):
            return fewer
    return parallelism


def _whole(assigned: list[list[FileSplit]]) -> bool:
    """Whether each file's splits are all in one subtask's share."""
    owner: dict[str, int] = {}
    return all(owner.setdefault(s.path, k) == k for k, part in enumerate(assigned) for s in part)


def _by_file(splits: Sequence[FileSplit]) -> dict[str, list[int]]:
    """The splits' indices by file, in enumeration order."""
    files: dict[str, list[int]] = {}
    for index, split in enumerate(splits):
        files.setdefault(split.path, []).append(index)
    return files


def _balanced(splits: Sequence[FileSplit], units: list[list[int]], parallelism: int):
    """(subtask, unit) for each unit of split indices: biggest unit first to the least-loaded
    subtask, ties to the lowest index."""
    loads = [(0, subtask) for subtask in range(parallelism)]
    sizes = [sum(splits[i].length for i in unit) for unit in units]
    for k in sorted(range(len(units)), key=lambda k: (-sizes[k], units[k][0])):
        load, subtask = heapq.heappop(loads)
        yield subtask, units[k]
        heapq.heappush(loads, (load + sizes[k], subtask))


def read_splits(
    splits: Sequence[FileSplit],
    columns: Sequence[str] | None = None,
    *,
    csv_options: Mapping[str, Any] | None = None,
    source: str = "read_splits",
) -> pa.Table:
    """Exactly the rows of ``splits``, in order, with hive partition values as string columns.
    CSV splits need the options of their source (``FileSource.read`` passes them); an error
    names ``source``."""
    tables = []
    for split in splits:
        try:
            tables.append(_read_split(split, columns, csv_options or {}))
        except (OSError, pa.ArrowException, KeyError) as error:
            raise SourceError(source, split.path, f"cannot read split: {error}") from error
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="default")


def _read_split(
    split: FileSplit, columns: Sequence[str] | None, csv_options: Mapping[str, Any]
) -> pa.Table:
    partitions = dict(split.partition_values)
    file_columns = None if columns is None else [c for c in columns if c not in partitions]
    fs, path = fsspec.core.url_to_fs(split.path)
    with fs.open(path, "rb") as file:
        if split.format == "parquet":
            table = pq.ParquetFile(file).read_row_groups(list(split.row_groups), file_columns)
        else:
            table = _read_csv_range(file, split, file_columns, csv_options)
    for key, value in split.partition_values:
        if key in table.column_names:
            table = table.drop_columns([key])
        table = table.append_column(key, pa.array([value] * table.num_rows, pa.string()))
    return table if columns is None else table.select(list(columns))


def _picked(options: Mapping[str, Any], keys) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k in keys}


def _read_csv_range(
    file: Any, split: FileSplit, columns: list[str] | None, options: Mapping[str, Any]
) -> pa.Table:
    parse = pacsv.ParseOptions(**_picked(options, CSV_PARSE_KEYS))
    has_header = "column_names" not in options
    names = list(options["column_names"]) if not has_header else _header_names(file, parse)
    types = {name: pa.string() for name in names} | dict(options.get("column_types", {}))
    convert = pacsv.ConvertOptions(
        **_picked(options, CSV_CONVERT_KEYS)
        | {"column_types": types, "include_columns": columns or []}
    )
    body = _owned_lines(file, split.start, split.start + split.length, has_header)
    if not body:
        return pa.schema([(n, types[n]) for n in columns or names]).empty_table()
    return pacsv.read_csv(io.BytesIO(body), pacsv.ReadOptions(column_names=names), parse, convert)


def _header_names(file: Any, parse: pacsv.ParseOptions) -> list[str]:
    """The header line parsed by Arrow with the source's dialect. Arrow cannot read a header
    without a row after it, so the line is given twice and the copy is thrown away."""
    file.seek(0)
    line = file.readline().rstrip(b"\r\n")
    if not line:
        raise pa.ArrowInvalid("the CSV file has no header line")
    return pacsv.read_csv(io.BytesIO(line + b"\n" + line), parse_options=parse).column_names


def _owned_lines(file: Any, start: int, end: int, skip_header: bool) -> bytes:
    """The bytes of the lines that begin in ``[start, end)``, through the end of the last."""
    if start > 0:
        file.seek(start - 1)
        file.readline()
    else:
        file.seek(0)
        if skip_header:
            file.readline()
    first = file.tell()
    if first >= end:
        return b""
    body = file.read(end - first)
    return body if body.endswith(b"\n") else body + file.readline()
