"""The tables a query may read: their files, their columns' types and how many bytes each
column holds, read from the files themselves in the client (Parquet footers, a CSV file's first
block), with no JVM.

A table is a Parquet or CSV directory (hive-partitioned ones with their partition columns) on
any file system fsspec knows, named by the user: ``Client.sql(..., tables={"orders": path})``
or, for the CLI, a YAML catalogue::

    tables:
      lineitem: /data/tpch/lineitem
      events: {path: s3://bucket/events, format: csv, partitioning: hive}

The bytes a column holds on disk are what the planner orders joins by and what it compares
with the broadcast threshold (``table.optimizer.join.broadcast-threshold``), counted as a
Parquet source counts what it reads: the compressed column chunks.
"""

from __future__ import annotations

import datetime
import difflib
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import fsspec
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from jobmanager.errors import TableError, UnknownTableError
from jobmanager.model.partition_filter import HIVE_NULL
from jobmanager.model.sources import DataFile, FileSource, PartitionPredicate, SourceError
from jobmanager.planner.types import BIGINT, DATE, INT, STRING, SqlType, from_arrow

__all__ = ["Catalog", "Table", "TableColumn", "TableSpec"]

_FOOTER_THREADS = 32
_DESCRIBED_FILE_SETS = 256  # tables' footers kept in a client, as their files were listed
_CSV_SAMPLE_BYTES = 1 << 20
_SPEC_KEYS = {"path", "format", "partitioning", "csv"}


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What the user said about a table: where it is and how to read it."""

    name: str
    path: str
    format: str | None = None
    partitioning: str | None = None
    csv_options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableColumn:
    """``name`` as the files spell it; ``listed_bytes``: its compressed bytes on disk;
    ``bounds``: for an integer or date column whose files keep min and max statistics, the
    least and the greatest value (a date as its day number, ``date.toordinal``)."""

    name: str
    type: SqlType
    listed_bytes: int
    partition: bool = False
    bounds: tuple[int, int] | None = None

    @property
    def value_range(self) -> int | None:
        """How many values lie between the bounds: a bound on the column's distinct values."""
        return None if self.bounds is None else self.bounds[1] - self.bounds[0] + 1


@dataclass(frozen=True)
class Table:
    spec: TableSpec
    format: str
    columns: tuple[TableColumn, ...]
    files: int
    rows: int | None

    @property
    def name(self) -> str:
        return self.spec.name

    def column(self, name: str) -> TableColumn | None:
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    def listed_bytes(self, columns: Sequence[str]) -> int:
        wanted = {c.lower() for c in columns}
        return sum(c.listed_bytes for c in self.columns if c.name.lower() in wanted)

    def source(
        self, columns: Sequence[str], partition_filter: Sequence[PartitionPredicate] = ()
    ) -> FileSource:
        """A source reading ``columns`` (as the files spell them) of the partitions the filter
        lets through. A table whose types were read from a CSV sample reads every file so."""
        csv = dict(self.spec.csv_options)
        if self.format == "csv" and "column_types" not in csv:
            csv["column_types"] = {
                c.name: _CSV_ARROW[c.type.name]
                for c in self.columns
                if not c.partition and c.type.name in _CSV_ARROW
            }
        return FileSource(
            self.spec.path,
            format=self.spec.format,
            partitioning=self.spec.partitioning,
            columns=list(columns),
            csv_options=csv or None,
            partition_filter=partition_filter,
        )


_CSV_ARROW = {"bigint": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(),
              "date": pa.date32(), "string": pa.string(),
              "timestamp_ntz": pa.timestamp("us")}  # fmt: skip


class Catalog:
    """Named tables, each described (its files listed, its footers read) on first use."""

    def __init__(self, specs: Sequence[TableSpec]) -> None:
        self._specs: dict[str, TableSpec] = {}
        for spec in specs:
            key = spec.name.lower()
            if key in self._specs:
                raise TableError(f"table {spec.name!r} is named twice")
            self._specs[key] = spec
        self._described: dict[str, Table] = {}

    @classmethod
    def from_tables(cls, tables: Mapping[str, Any] | None) -> Catalog:
        """``{name: path}`` or ``{name: {"path": ..., "format": "csv", "partitioning": "hive",
        "csv": {...}}}``."""
        return cls([_spec(name, value, "tables") for name, value in (tables or {}).items()])

    @classmethod
    def from_yaml(cls, path: str) -> Catalog:
        """A YAML file mapping table names to paths (or to ``{path, format, partitioning,
        csv}``), at its top level or under ``tables:``; relative paths are relative to the
        file's folder."""
        import yaml

        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
        except FileNotFoundError:
            raise TableError(f"catalogue {path}: no such file") from None
        except OSError as error:
            raise TableError(f"catalogue {path}: cannot read it: {error.strerror}") from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
            raise TableError(f"catalogue {where}: not valid YAML") from None
        tables = data.get("tables", data) if isinstance(data, dict) else None
        if not isinstance(tables, dict):
            raise TableError(f"catalogue {path}: expected a mapping of table names to paths")
        base = os.path.dirname(os.path.abspath(path))
        specs = []
        for name, value in tables.items():
            spec = _spec(str(name), value, f"catalogue {path}")
            if "://" not in spec.path and not os.path.isabs(spec.path):
                spec = TableSpec(
                    spec.name,
                    os.path.join(base, spec.path),
                    spec.format,
                    spec.partitioning,
                    spec.csv_options,
                )
            specs.append(spec)
        return cls(specs)

    def merged(self, other: Catalog) -> Catalog:
        """These tables and ``other``'s; ``other`` wins a name both have."""
        specs = {**self._specs, **other._specs}
        return Catalog(list(specs.values()))

    @property
    def names(self) -> list[str]:
        return sorted(spec.name for spec in self._specs.values())

    def has(self, name: str) -> bool:
        return name.lower() in self._specs

    def closest(self, name: str) -> str | None:
        found = difflib.get_close_matches(name.lower(), list(self._specs), n=1, cutoff=0.6)
        return self._specs[found[0]].name if found else None

    def table(self, name: str) -> Table:
        key = name.lower()
        if key not in self._specs:
            raise UnknownTableError(
                f"unknown table {name!r}; the known tables are {', '.join(self.names) or 'none'}"
            )
        if key not in self._described:
            self._described[key] = describe(self._specs[key])
        return self._described[key]


def _spec(name: str, value: Any, where: str) -> TableSpec:
    if isinstance(value, (str, os.PathLike)):
        return TableSpec(name, os.fspath(value))
    if not isinstance(value, Mapping) or "path" not in value:
        raise TableError(f"{where}: table {name!r} needs a path (or {{path: ..., format: ...}})")
    unknown = sorted(set(value) - _SPEC_KEYS)
    if unknown:
        raise TableError(
            f"{where}: table {name!r}: unknown keys {unknown}; use {sorted(_SPEC_KEYS)}"
        )
    return TableSpec(
        name,
        os.fspath(value["path"]),
        value.get("format"),
        value.get("partitioning"),
        dict(value.get("csv") or {}),
    )


def describe(spec: TableSpec) -> Table:
    """The table's columns, with their types and bytes, from its files."""
    try:
        source = FileSource(
            spec.path,
            format=spec.format,
            partitioning=spec.partitioning,
            csv_options=spec.csv_options or None,
        )
        files = source.data_files()
    except SourceError as error:
        raise TableError(
            f"table {spec.name!r} at {spec.path}: {error.args[0].split(': ', 1)[-1]}"
        ) from None
    try:
        if files[0].format == "parquet":
            columns, rows = _parquet_columns(tuple(files))
        else:
            columns, rows = _csv_columns(files, spec.csv_options), None
    except (OSError, pa.ArrowException) as error:
        raise TableError(
            f"table {spec.name!r} at {spec.path}: cannot read its files: {error}"
        ) from None
    columns = [*columns, *_partition_columns(files)]
    seen: dict[str, str] = {}
    for column in columns:
        if seen.setdefault(column.name.lower(), column.name) != column.name:
            raise TableError(
                f"table {spec.name!r}: columns {seen[column.name.lower()]!r} and "
                f"{column.name!r} differ only in case, which Spark cannot tell apart"
            )
    return Table(spec, files[0].format, tuple(columns), len(files), rows)


def _parquet_columns(files: tuple[DataFile, ...]) -> tuple[tuple[TableColumn, ...], int]:
    """The columns and rows the files' footers give; kept for the files as listed (path, size
    and version), as Spark keeps a registered table's schema and size: the next query over the
    same files reads no footer again, and a file rewritten is listed with another version."""
    if not all(file.version for file in files):
        return _read_parquet_columns(files)
    return _parquet_columns_of_versions(files)


def _read_parquet_columns(files: tuple[DataFile, ...]) -> tuple[tuple[TableColumn, ...], int]:
    def footer(file: DataFile):
        fs, path = fsspec.core.url_to_fs(file.path)
        with fs.open(path, "rb") as handle:
            return pq.read_metadata(handle)

    if len(files) == 1:
        footers = [footer(files[0])]
    else:
        with ThreadPoolExecutor(min(_FOOTER_THREADS, len(files))) as pool:
            footers = list(pool.map(footer, files))
    types: dict[str, SqlType] = {}
    sizes: dict[str, int] = {}
    bounds: dict[str, tuple | None] = {}
    for metadata in footers:
        for arrow_field in metadata.schema.to_arrow_schema():
            types.setdefault(arrow_field.name, from_arrow(arrow_field.type))
        for index in range(metadata.num_row_groups):
            group = metadata.row_group(index)
            for chunk in (group.column(i) for i in range(group.num_columns)):
                top = chunk.path_in_schema.split(".")[0]
                sizes[top] = sizes.get(top, 0) + chunk.total_compressed_size
                bounds[top] = _widened(bounds.get(top, ()), chunk)
    columns = tuple(
        TableColumn(name, kind, sizes.get(name, 0), bounds=_as_integers(bounds.get(name)))
        for name, kind in types.items()
    )
    return columns, sum(metadata.num_rows for metadata in footers)


_parquet_columns_of_versions = functools.lru_cache(maxsize=_DESCRIBED_FILE_SETS)(
    _read_parquet_columns
)


def _widened(bounds: tuple | None, chunk) -> tuple | None:
    """The (min, max) of a column over the chunks seen, None once one has no statistics
    (``()``: no chunk seen yet)."""
    statistics = chunk.statistics
    if bounds is None or statistics is None or not statistics.has_min_max:
        return None
    low, high = statistics.min, statistics.max
    if not isinstance(low, (int, datetime.date)) or isinstance(low, bool):
        return None
    return (low, high) if not bounds else (min(bounds[0], low), max(bounds[1], high))


def _as_integers(bounds: tuple | None) -> tuple[int, int] | None:
    if not bounds:
        return None
    if isinstance(bounds[0], datetime.date):
        return bounds[0].toordinal(), bounds[1].toordinal()
    return bounds


def _csv_columns(files: list[DataFile], options: Mapping[str, Any]) -> list[TableColumn]:
    """Types inferred by Arrow from the first file's first megabyte (as Spark's
    ``inferSchema`` samples), unless ``column_types`` names them; bytes shared evenly."""
    fs, path = fsspec.core.url_to_fs(files[0].path)
    with fs.open(path, "rb") as handle:
        sample = handle.read(_CSV_SAMPLE_BYTES)
    if len(sample) == _CSV_SAMPLE_BYTES and b"\n" in sample:
        sample = sample[: sample.rindex(b"\n") + 1]
    parse = pacsv.ParseOptions(
        **{k: v for k, v in options.items() if k in ("delimiter", "quote_char", "escape_char")}
    )
    names = options.get("column_names")
    read = pacsv.ReadOptions(column_names=list(names)) if names else pacsv.ReadOptions()
    convert = pacsv.ConvertOptions(column_types=dict(options.get("column_types", {})))
    schema = pacsv.read_csv(pa.py_buffer(sample), read, parse, convert).schema
    total = sum(file.size for file in files)
    share = total // max(1, len(schema))
    return [TableColumn(f.name, from_arrow(f.type), share) for f in schema]


def _partition_columns(files: list[DataFile]) -> list[TableColumn]:
    """Hive partition columns, typed as Spark infers them from the directory values: integers,
    else dates, else strings."""
    keys = [key for key, _ in files[0].partition_values]
    columns = []
    for key in keys:
        values = {dict(f.partition_values)[key] for f in files} - {HIVE_NULL}
        columns.append(TableColumn(key, _inferred(values), 0, partition=True))
    return columns


def _inferred(values: set[str]) -> SqlType:
    def all_are(parse) -> bool:
        try:
            return all(parse(v) is not None for v in values) and bool(values)
        except ValueError:
            return False

    if all_are(int):
        return INT if all(-(2**31) <= int(v) < 2**31 for v in values) else BIGINT
    if all_are(lambda v: datetime.date.fromisoformat(v) if len(v) == 10 else int("x")):
        return DATE
    return STRING
