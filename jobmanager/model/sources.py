"""File sources: Parquet and CSV files cut into splits, with FLIP-379 dynamic parallelism.

A ``FileSource`` only records what to read; the file system is first touched when splits are
enumerated, which is when the JobManager infers the source's parallelism (off its event loop),
so building a job graph never lists a directory. A source's parallelism is the number of its
splits, capped by the upper bound the scheduler gives, as in Flink's FileSource, and rounded
down to whole waves of the job's slots (``FileSource.plan``).

CSV splits are byte ranges aligned to lines when read (``jobmanager.model.splits``).

Connector code: it may use the file system; the pure scheduling core never imports it.
"""

from __future__ import annotations

import glob
import os
import posixpath
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import unquote

import fsspec
import pyarrow as pa
import structlog

from jobmanager.model.file_listing import is_data_path, is_published, listing, published_files
from jobmanager.model.inference import DynamicFilteringInfo, InferenceContext, SourcePlan
from jobmanager.model.partition_filter import PARTITION_TYPES, passes
from jobmanager.model.splits import (
    CSV_CONVERT_KEYS,
    CSV_PARSE_KEYS,
    FileSplit,
    PartitionValues,
    SourceError,
    in_whole_waves,
    read_splits,
    whole_file_parallelism,
)
from jobmanager.model.splitting import csv_splits, parquet_splits
from jobmanager.model.urls import redact

__all__ = ["DataFile", "FileSource", "PartitionPredicate", "SourceError"]

_log = structlog.get_logger("tidal.sources")

_FORMATS = ("parquet", "csv")
_EXTENSIONS = {".parquet": "parquet", ".parq": "parquet", ".pq": "parquet", ".csv": "csv"}
_LISTING_THREADS = 32  # footers read at once while listing
# What fsspec's listings say of a file's last write: local, S3, Google Cloud Storage, Azure.
_VERSION_KEYS = ("mtime", "ino", "ETag", "LastModified", "generation", "etag", "last_modified")
_CSV_KEYS = CSV_PARSE_KEYS | CSV_CONVERT_KEYS | {"column_names"}
Filters = DynamicFilteringInfo | Iterable[DynamicFilteringInfo] | None


@dataclass(frozen=True, slots=True)
class DataFile:
    """One data file of a source, with its hive partition values (from its directories) and
    ``version``: what its listing says of its last write (a local file's modification time and
    inode, an object's ETag), empty where the file system says nothing of it."""

    path: str
    size: int
    format: str
    partition_values: PartitionValues
    version: str = ""


# (column, type, operator, values): a hive partition column compared with constants, ``type``
# one of "bigint", "date", "string" (how its directory values are read), ``operator`` one of
# = != < <= > >= in, ``values`` the constants as strings. A SQL planner prunes partitions with
# these; the rows are filtered again after reading, so a predicate here only saves reading.
PartitionPredicate = tuple[str, str, str, tuple[str, ...]]


class FileSource:
    """Parquet or CSV files named by paths, directories, globs (``**`` allowed) or fsspec URLs."""

    __slots__ = ("paths", "format", "partitioning", "columns", "csv_options", "partition_filter")

    def __init__(
        self,
        paths: str | os.PathLike | Sequence[str | os.PathLike],
        format: str | None = None,
        partitioning: str | None = None,
        columns: Sequence[str] | None = None,
        csv_options: Mapping[str, Any] | None = None,
        partition_filter: Sequence[PartitionPredicate] = (),
    ) -> None:
        """``partition_filter``: hive partitions whose values fail any of these predicates are
        not read (see ``PartitionPredicate``)."""
        given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        self.paths = tuple(_absolute(os.fspath(p)) for p in given)
        self.format = format
        self.partitioning = partitioning
        self.columns = tuple(columns) if columns is not None else None
        self.csv_options = dict(csv_options or {})
        self.partition_filter = tuple((c, t, o, tuple(v)) for c, t, o, v in partition_filter)
        self._check_arguments()

    def __repr__(self) -> str:
        """What is read, with any credentials a URL carries masked: the repr goes into logs,
        events and explanations."""
        return redact(self._key())

    def _key(self) -> str:
        shown = [
            f"{name}={getattr(self, name)!r}" for name in self.__slots__[1:] if getattr(self, name)
        ]
        return f"FileSource({', '.join([repr(list(self.paths)), *shown])})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileSource) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def splits(self, target_split_bytes: int, dynamic_filtering: Filters = None) -> list[FileSplit]:
        """Every split of the source in path order, dropping hive partitions that a dynamic
        filter rules out; lists the files now, so the errors of a bad path surface here."""
        if target_split_bytes < 1:
            raise SourceError(repr(self), None, f"target split size {target_split_bytes} < 1")
        return self._listing(target_split_bytes, dynamic_filtering)[0]

    def _listing(
        self, target_split_bytes: int, dynamic_filtering: Filters
    ) -> tuple[list, int, int, int]:
        """The splits, how many files of how many bytes they cover, and how many files the
        dynamic filters pruned. Each Parquet file's
        footer is read for its row groups and schema, many at a time: thousands of small files
        on an object store are not thousands of round trips one after the other."""
        filters = (
            (dynamic_filtering,)
            if isinstance(dynamic_filtering, DynamicFilteringInfo)
            else tuple(dynamic_filtering or ())
        )
        discovered = self._discover()
        files = self._surviving(discovered, filters)
        splittable = not self.csv_options.get("newlines_in_values", False)
        with ThreadPoolExecutor(min(_LISTING_THREADS, max(1, len(files)))) as pool:
            listed = list(
                pool.map(lambda f: self._file_splits(f, target_split_bytes, splittable), files)
            )
        result, columns = [], {}
        for file, (file_splits, schema) in zip(files, listed):
            self._check_column_types(file, schema, columns)
            result.extend(file_splits)
        _log.debug("splits enumerated", source=repr(self), files=len(files), splits=len(result))
        return result, len(files), sum(file.size for file in files), len(discovered) - len(files)

    def plan(self, context: InferenceContext) -> SourcePlan:
        """FLIP-379's FileSource, sized by its bytes as the adaptive scheduler sizes any vertex:
        enumerate splits of about the data volume per task, keeping only partitions the dynamic
        filters let through; then one task per data volume per task of what the splits read,
        at most one per split and the upper bound, at least 1. What a Parquet split reads is
        the column chunks of the source's columns, not the whole file: three files whose read
        columns hold less than one task's volume are one task, as Spark packs small files into
        one partition, and one Spark query instead of three.
        Then whole waves: where that is more than the job's slots and not a multiple of them,
        it is rounded down to one (3 tasks on 2 slots would run as 2 and then 1 alone; as 2
        they end together, and pay Spark's fixed cost per query once less). A task then reads
        less than twice the data volume per task (``in_whole_waves``). Then whole files, for
        files Spark reads itself: where those tasks would read shares of files, the most tasks
        down to half as many, in whole waves, that each read whole files evenly
        (``whole_file_parallelism``).
        The splits are kept for the tasks, and the listing's figures for the explanation."""
        began = time.perf_counter()
        volume = max(1, context.data_volume_per_task)
        splits, files, size, pruned = self._listing(volume, context.dynamic_filtering)
        seconds = time.perf_counter() - began
        read = sum(split.length for split in splits)
        by_bytes = -(-read // volume)
        wanted = max(1, min(by_bytes, len(splits), context.parallelism_upper_bound))
        waves = in_whole_waves(wanted, context.slots)
        inferred = whole_file_parallelism(splits, waves, context.slots)
        _log.info(
            "source parallelism inferred",
            source=repr(self),
            splits=len(splits),
            files=files,
            read_bytes=read,
            upper_bound=context.parallelism_upper_bound,
            parallelism=inferred,
            listing_ms=int(seconds * 1000),
        )
        described = f"{files:,} files, {_size(size)}"
        if read != size:
            described += f", {_size(read)} in the columns read"
        described += f", {len(splits):,} splits, listed in {seconds * 1000:,.0f} ms"
        if by_bytes < min(len(splits), context.parallelism_upper_bound):
            described += f"; {_size(read)} at {_size(volume)} a task -> {max(1, by_bytes)}"
        if waves != wanted:
            described += f"; {wanted} tasks -> {waves}, whole waves of {context.slots} slots"
        if inferred != waves:
            described += (
                f"; {waves} tasks -> {inferred}, each reading whole files (Spark reads "
                "them itself, not through Arrow)"
            )
        if pruned:
            dynamic = sorted({f.column for f in context.dynamic_filtering})
            static = sorted({predicate[0] for predicate in self.partition_filter})
            by = [f"dynamic filtering on {', '.join(dynamic)}"] if dynamic else []
            by += [f"the query's filter on {', '.join(static)}"] if static else []
            described += f"; {pruned:,} more files in partitions pruned by {' and '.join(by)}"
        return SourcePlan(inferred, tuple(splits), described)

    def infer_parallelism(self, context: InferenceContext) -> int:
        return self.plan(context).parallelism

    def read(self, splits: Sequence[FileSplit]) -> pa.Table:
        """The rows of ``splits``, projected to this source's columns."""
        return read_splits(splits, self.columns, csv_options=self.csv_options, source=repr(self))

    def _check_arguments(self) -> None:
        """Mistakes visible without the file system fail at construction, naming the source."""
        if not self.paths:
            raise SourceError(repr(self), None, "no paths given")
        if self.format not in (None, *_FORMATS):
            raise SourceError(repr(self), None, f"unknown format {self.format!r}; use {_FORMATS}")
        if self.partitioning not in (None, "hive"):
            raise SourceError(repr(self), None, f"unknown partitioning {self.partitioning!r}")
        unknown = sorted(set(self.csv_options) - _CSV_KEYS)
        if unknown:
            raise SourceError(repr(self), None, f"unknown csv options {unknown}")
        for column, type_name, op, _ in self.partition_filter:
            if type_name not in PARTITION_TYPES or op not in (
                "=",
                "!=",
                "<",
                "<=",
                ">",
                ">=",
                "in",
            ):
                raise SourceError(
                    repr(self), None, f"bad partition filter on {column!r}: {type_name} {op}"
                )

    def data_files(self) -> list[DataFile]:
        """The data files behind every path, deduplicated and sorted by path, before any
        partition filter; lists the file system now."""
        return self._discover()

    def _discover(self) -> list[DataFile]:
        """The data files behind every path, deduplicated and sorted by path."""
        found: dict[str, DataFile] = {}
        for pattern in self.paths:
            for file in self._files_of(pattern):
                found.setdefault(file.path, file)
        files = [found[path] for path in sorted(found)]
        self._check_formats(files)
        self._check_partition_columns(files)
        return files

    def _files_of(self, pattern: str) -> list[DataFile]:
        fs, path = fsspec.core.url_to_fs(pattern)
        fs.invalidate_cache()  # what is there now, not what this process listed before
        try:
            base, infos = listing(fs, path)
        except OSError as error:
            raise SourceError(repr(self), pattern, f"cannot list: {error}") from error
        if base is None:
            problem = "glob matches nothing" if glob.has_magic(path) else "path does not exist"
            raise SourceError(repr(self), pattern, problem)
        published = published_files(fs, infos)
        files = [
            self._data_file(fs, name, info, base)
            for name, info in infos.items()
            if info.get("type") != "directory"
            and (name == path or is_data_path(name, base))
            and is_published(name, published, base)
        ]
        if not files:
            raise SourceError(repr(self), pattern, "no data files (hidden files are skipped)")
        return files

    def _data_file(self, fs: Any, path: str, info: dict, base: str) -> DataFile:
        address = path if _is_local(fs) else fs.unstrip_protocol(path)
        directories = posixpath.relpath(posixpath.dirname(path), base).split("/")
        values = tuple(
            (key, unquote(value))
            for key, sep, value in (part.partition("=") for part in directories)
            if sep and key
        )
        version = " ".join(str(info[key]) for key in _VERSION_KEYS if info.get(key) is not None)
        return DataFile(
            address,
            info["size"],
            self.format or _format_of(path),
            values if self.partitioning == "hive" else (),
            version,
        )

    def _check_formats(self, files: list[DataFile]) -> None:
        for file in files:
            if file.format is None:
                raise SourceError(
                    repr(self), file.path, f"unknown file format; pass format= one of {_FORMATS}"
                )
        by_format = {file.format: file.path for file in files}
        if len(by_format) > 1:
            mixed = ", ".join(f"{fmt} ({path})" for fmt, path in sorted(by_format.items()))
            raise SourceError(repr(self), files[0].path, f"mixed file formats: {mixed}")

    def _check_partition_columns(self, files: list[DataFile]) -> None:
        expected = _partition_columns(files)
        for file in files:
            if tuple(key for key, _ in file.partition_values) != expected:
                raise SourceError(
                    repr(self), file.path, f"partition directories differ from {list(expected)}"
                )

    def _surviving(
        self, files: list[DataFile], filters: tuple[DynamicFilteringInfo, ...]
    ) -> list[DataFile]:
        """Files whose hive partition values pass every filter on a partition column; the first
        filter of a column counts, as with ``InferenceContext.filter_for``."""
        columns = _partition_columns(files)
        allowed: dict[str, frozenset[str]] = {}
        for info in filters:
            if info.column not in columns:
                _log.warning(
                    "dynamic filter on a column that is not a partition column ignored",
                    source=repr(self),
                    column=info.column,
                    partition_columns=columns,
                )
            else:
                allowed.setdefault(info.column, frozenset(map(str, info.values)))
        kept = [
            f
            for f in files
            if all(value in allowed.get(key, (value,)) for key, value in f.partition_values)
            and passes(dict(f.partition_values), self.partition_filter)
        ]
        if len(kept) < len(files):
            _log.info("partitions pruned", source=repr(self), files=len(files), kept=len(kept))
        return kept

    def _file_splits(
        self, file: DataFile, target: int, splittable: bool
    ) -> tuple[list[FileSplit], pa.Schema | None]:
        """The file's splits, and its schema where the listing read it (Parquet's footer)."""
        try:
            if file.format == "parquet":
                return parquet_splits(file, target, self.columns)
            return csv_splits(file, target if splittable else max(file.size, 1)), None
        except (OSError, pa.ArrowException) as error:
            raise SourceError(repr(self), file.path, f"unreadable file: {error}") from error

    def _check_column_types(
        self, file: DataFile, schema: pa.Schema | None, seen: dict[str, tuple[pa.DataType, str]]
    ) -> None:
        """Files of one source must agree on the type of every column they share (a column
        only some files have is null in the others' rows): a task reading two that disagree
        would fail on every attempt, so the listing refuses them, naming both files."""
        for field in schema or ():
            first = seen.setdefault(field.name, (field.type, file.path))
            if first[0] != field.type:
                raise SourceError(
                    repr(self),
                    file.path,
                    f"column {field.name!r} is {field.type} here but {first[0]} "
                    f"in {first[1]}: a source's files must agree on their "
                    "columns' types",
                )


def _partition_columns(files: list[DataFile]) -> tuple[str, ...]:
    return tuple(key for key, _ in files[0].partition_values) if files else ()


def _format_of(path: str) -> str | None:
    return _EXTENSIONS.get(posixpath.splitext(path)[1].lower())


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _is_local(fs: Any) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol
    return "file" in protocols


def _absolute(path: str) -> str:
    """Local paths become absolute at construction: the job reads them in another process."""
    return path if "://" in path else os.path.abspath(path)
