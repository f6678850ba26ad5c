"""``spark.read``'s options as Tidal's tables: a path Spark would read becomes a named table of
the session's catalogue, with the columns and types Spark would give it.

Spark's readers and Tidal's sources agree on Parquet; for CSV, Spark's options are translated
to the Arrow options Tidal's CSV source reads with (``jobmanager.model.splits``):

- ``header`` (default false): without it, the columns are Spark's ``_c0``, ``_c1``, ...;
- ``inferSchema`` (default false): without it, every column is a string, as in Spark; with it,
  Arrow infers the types from the first file's first megabyte (Spark reads the whole input);
- ``schema``: the columns' names by position and their types;
- ``sep``/``delimiter``, ``quote``, ``escape``, ``nullValue``, ``multiLine``;
- an empty field is null, as in Spark.

Hive-partitioned directories (``date=2024-01-02/``) give partition columns, as in Spark. An
option Tidal cannot honour is refused by name rather than silently read another way.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.csv as pacsv

from jobmanager.client.dataframe.unsupported import unsupported
from jobmanager.planner.catalog import Catalog
from jobmanager.planner.types import from_arrow

__all__ = ["ReadTable", "ddl_fields", "read_table"]

_IGNORED = {"encoding", "mode", "path", "mergeschema", "samplingratio", "enforceschema"}
_CSV_KEYS = {
    "header",
    "inferschema",
    "sep",
    "delimiter",
    "quote",
    "escape",
    "nullvalue",
    "multiline",
    "ignoreleadingwhitespace",
    "ignoretrailingwhitespace",
} | _IGNORED
_PARQUET_KEYS = _IGNORED
_SPARK_TO_ARROW = {
    "string": pa.string(), "int": pa.int32(), "bigint": pa.int64(), "smallint": pa.int16(),
    "tinyint": pa.int8(), "double": pa.float64(), "float": pa.float32(),
    "boolean": pa.bool_(), "date": pa.date32(), "timestamp": pa.timestamp("us"),
}  # fmt: skip


@dataclass(frozen=True)
class ReadTable:
    """A table as Tidal's catalogue takes it (``spec``), its columns as the files name them
    with their Spark types, and, where a given schema renames or retypes them, the
    ``(file column, name, type)`` to project."""

    spec: Mapping[str, Any]
    columns: tuple[tuple[str, str], ...]
    projection: tuple[tuple[str, str, str], ...] = ()


def read_table(
    path: str, format: str, options: Mapping[str, Any], schema: list[tuple[str, str]] | None
) -> ReadTable:
    """The table ``spark.read.format(format).options(**options).schema(schema).load(path)``
    reads."""
    options = {key.lower(): value for key, value in options.items() if value is not None}
    if format == "parquet":
        _check_keys(options, _PARQUET_KEYS, "read.parquet")
        spec = {"path": path, "format": "parquet", "partitioning": "hive"}
        columns = _described(spec)
        if schema:
            have = {name.lower(): name for name, _ in columns}
            return ReadTable(
                spec, columns, tuple((have.get(n.lower(), n), n, t) for n, t in schema)
            )
        return ReadTable(spec, columns)
    if format == "csv":
        _check_keys(options, _CSV_KEYS, "read.csv")
        return _csv_table(path, options, schema)
    raise unsupported(
        f"read.format({format!r})",
        "Tidal reads Parquet and CSV files",
        "read the data as Parquet or CSV",
    )


def _check_keys(options: Mapping[str, Any], known: set[str], method: str) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise unsupported(
            f"{method} option {unknown[0]!r}",
            f"Tidal's reader takes {', '.join(sorted(known - _IGNORED))}",
        )


def _described(spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    table = Catalog.from_tables({"t": dict(spec)}).table("t")
    return tuple((column.name, str(column.type)) for column in table.columns)


def _csv_table(path: str, options: Mapping[str, Any], schema) -> ReadTable:
    csv = _arrow_csv_options(options)
    header = _true(options.get("header"))
    sample = _first_block(path)
    parse = pacsv.ParseOptions(
        **{k: v for k, v in csv.items() if k in ("delimiter", "quote_char", "escape_char")}
    )
    names = _csv_names(sample, parse, header)
    if not header:
        csv["column_names"] = names
    csv["column_types"] = _csv_types(sample, parse, names, header, schema, options)
    spec = {"path": path, "format": "csv", "partitioning": "hive", "csv": csv}
    columns = tuple((name, str(from_arrow(csv["column_types"][name]))) for name in names)
    partitions = tuple(c for c in _described(spec) if c[0] not in csv["column_types"])
    projection = tuple((file, name, kind) for file, (name, kind) in zip(names, schema or ()))
    return ReadTable(spec, columns + partitions, projection)


def _arrow_csv_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Spark's CSV options as the Arrow options Tidal's CSV source reads with."""
    csv: dict[str, Any] = {
        "null_values": [options.get("nullvalue", "")],
        "strings_can_be_null": True,
    }
    separator = options.get("sep", options.get("delimiter"))
    if separator is not None:
        csv["delimiter"] = str(separator)
    if "quote" in options:
        csv["quote_char"] = str(options["quote"]) or False
    if "escape" in options:
        csv["escape_char"] = str(options["escape"])
    if _true(options.get("multiline")):
        csv["newlines_in_values"] = True
    return csv


def _csv_names(sample: bytes, parse: pacsv.ParseOptions, header: bool) -> list[str]:
    """The columns' names: the header's, else Spark's ``_c0``, ``_c1``, ... for as many
    columns as the first line has."""
    if header:
        return pacsv.read_csv(io.BytesIO(sample), parse_options=parse).column_names
    if not sample.strip():
        return []
    numbered = pacsv.ReadOptions(autogenerate_column_names=True)
    width = len(pacsv.read_csv(io.BytesIO(sample), numbered, parse).column_names)
    return [f"_c{i}" for i in range(width)]


def _csv_types(sample: bytes, parse, names: list[str], header: bool, schema, options) -> dict:
    """Each column's Arrow type: the given schema's, inferred from the sample with
    ``inferSchema``, else a string, as in Spark."""
    if schema:
        return {
            name: _SPARK_TO_ARROW.get(kind, pa.string()) for name, (_, kind) in zip(names, schema)
        }
    if not _true(options.get("inferschema")):
        return {name: pa.string() for name in names}
    inferred = pacsv.read_csv(
        io.BytesIO(sample),
        pacsv.ReadOptions(column_names=names, skip_rows=1 if header else 0),
        parse,
        pacsv.ConvertOptions(null_values=[options.get("nullvalue", "")], strings_can_be_null=True),
    )
    return {f.name: f.type for f in inferred.schema}


def _first_block(path: str) -> bytes:
    """The first megabyte of the first CSV file under ``path``, cut at a line's end."""
    fs, root = fsspec.core.url_to_fs(path)
    files = sorted(
        f
        for f in (fs.find(root) if fs.isdir(root) else [root])
        if not f.rsplit("/", 1)[-1].startswith(("_", "."))
    )
    if not files:
        return b""
    with fs.open(files[0], "rb") as handle:
        sample = handle.read(1 << 20)
    return (
        sample[: sample.rindex(b"\n") + 1] if b"\n" in sample and len(sample) == 1 << 20 else sample
    )


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def ddl_fields(text: str) -> list[tuple[str, str]]:
    """A DDL schema (``id int, price decimal(12,2)``) as ``(name, Spark type)`` pairs: split at
    the commas outside a type's parentheses, which sqlframe's own reading does not do."""
    fields = []
    for part in re.split(r",(?![^()<>]*[)>])", text):
        name, _, kind = part.strip().partition(" ")
        fields.append((name.strip("`"), kind.strip().lower()))
    return fields
