"""``spark.read`` and ``df.write`` on Tidal.

A read names the files as a table of the session (``jobmanager.client.dataframe.sources``);
nothing is read until an action runs. A write is an action: one job whose sink is the target,
committed whole when the job finishes, so a failed write leaves nothing half written. Spark's
save modes: ``error`` (the default) refuses an existing target, ``overwrite`` replaces it,
``ignore`` does nothing when it exists, ``append`` adds this job's files.
"""

from __future__ import annotations

import functools

import fsspec
from sqlframe.base.readerwriter import (
    _BaseDataFrameReader,
    _BaseDataFrameWriter,
    _infer_format,
)
from sqlglot.helper import ensure_list

from jobmanager.client.dataframe.jobs import TidalAnalysisException
from jobmanager.client.dataframe.sources import ddl_fields, read_table
from jobmanager.client.dataframe.unsupported import caller_line, unsupported

__all__ = ["DataFrameReader", "DataFrameWriter"]

_MODES = {"error", "errorifexists", "overwrite", "append", "ignore"}


class DataFrameReader(_BaseDataFrameReader["SparkSession", "DataFrame", "Table"]):
    def schema(self, schema) -> DataFrameReader:
        """The columns to read, by position, with their types (a ``StructType`` or DDL)."""
        self._given_schema = schema
        return self

    def load(self, path=None, format=None, schema=None, **options):
        if path is None:
            raise unsupported("read.load() without a path", "Tidal reads files by path")
        format = (
            format or self.state_format_to_read or _infer_format(ensure_list(path)[0]) or "parquet"
        ).lower()
        options = {**self.state_options, **{k: v for k, v in options.items() if v is not None}}
        fields = _schema_fields(
            schema if schema is not None else getattr(self, "_given_schema", None)
        )
        frames = [self._one(str(p), format, options, fields) for p in ensure_list(path)]
        return functools.reduce(lambda a, b: a.union(b), frames)

    def _one(self, path: str, format: str, options, fields):
        from sqlframe.base import functions as F

        read = read_table(path, format, options, fields)
        name = self.session.runner.table_name(read.spec)
        self.session.catalog.add_table(
            name, {column: _typed(kind) for column, kind in read.columns}
        )
        frame = super().table(name)
        if read.projection:
            frame = frame.select(
                *[F.col(column).cast(kind).alias(alias) for column, alias, kind in read.projection]
            )
        return frame

    def table(self, tableName: str):
        if tableName.lower() in self.session.temp_views or tableName in self.session.temp_views:
            return super().table(tableName)
        raise TidalAnalysisException(
            f"{_here()}: table or view {tableName!r} not found: read files with spark.read, or "
            "name a DataFrame with createOrReplaceTempView",
            "TABLE_OR_VIEW_NOT_FOUND",
        )

    def json(self, *args, **kwargs):
        raise _not_parquet_or_csv("read.json")

    def orc(self, *args, **kwargs):
        raise _not_parquet_or_csv("read.orc")

    def text(self, *args, **kwargs):
        raise _not_parquet_or_csv("read.text")

    def jdbc(self, *args, **kwargs):
        raise _not_parquet_or_csv("read.jdbc", "export the table to Parquet")


class DataFrameWriter(_BaseDataFrameWriter["SparkSession", "DataFrame"]):
    def partitionBy(self, *cols) -> DataFrameWriter:  # noqa: N802 - PySpark's name
        """Write one directory per value of ``cols`` (``date=2024-01-02/``), as Spark does."""
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        return self.option("partitionBy", list(cols))

    def bucketBy(self, numBuckets, col, *cols):  # noqa: N802,N803
        raise unsupported(
            "write.bucketBy", "Tidal writes files, not bucketed tables", "partitionBy"
        )

    def saveAsTable(self, name, format=None, mode=None, partitionBy=None, **options):  # noqa: A002,N802,N803
        raise unsupported("write.saveAsTable", "Tidal has no metastore", "write.parquet(path)")

    def insertInto(self, tableName, overwrite=None):  # noqa: N802,N803
        raise unsupported(
            "write.insertInto", "Tidal has no metastore", "write.mode('append').parquet(path)"
        )

    def _write(self, path: str, mode: str | None, format: str, **options) -> None:
        mode = (mode or "error").lower()
        if mode not in _MODES:
            raise unsupported(f"write.mode({mode!r})", f"Spark's modes are {sorted(_MODES)}")
        format = format.lower()
        if format not in ("parquet", "csv"):
            raise unsupported(f"write.{format}", "Tidal writes Parquet and CSV files")
        partition_by = tuple(ensure_list(options.pop("partitionBy", None) or ()))
        header = str(options.pop("header", False)).lower() == "true"
        options.pop("compression", None)
        sep = options.pop("sep", options.pop("delimiter", ","))
        if sep != "," or options:
            raise unsupported(
                f"write option {next(iter(options), 'sep')!r}",
                "Tidal's writer takes partitionBy, header and mode",
            )
        if mode == "ignore" and _exists(path):
            return
        session = self._df.session
        with session.runner.acting(f"write.{format}"):
            sql = session._query_sql(self._df._get_expressions(optimize=False))
            session.runner.run(
                sql, session.runner.action, **_output(path, mode, format, partition_by, header)
            )


def _not_parquet_or_csv(method: str, alternative: str = "read the data as Parquet or CSV"):
    """The error for a reader of another format than the two Tidal reads."""
    return unsupported(method, "Tidal reads Parquet and CSV files", alternative)


def _output(path: str, mode: str, format: str, partition_by: tuple, header: bool) -> dict:
    """``plan_query``'s arguments for the sink."""
    return {
        "output": path,
        "overwrite": mode == "overwrite",
        "mode": mode,
        "output_format": format,
        "partition_by": partition_by,
        "csv_header": header,
    }


def _exists(path: str) -> bool:
    fs, root = fsspec.core.url_to_fs(path)
    return fs.exists(root)


def _here() -> str:
    place = caller_line()
    return f"{place[0]}:{place[1]}" if place else "<script>"


def _typed(kind: str) -> str:
    return "string" if kind in ("unknown", "null") else kind


def _schema_fields(schema) -> list[tuple[str, str]] | None:
    """A reader's schema (a ``StructType`` or a DDL string) as ``(name, Spark type)`` pairs."""
    if schema is None:
        return None
    if hasattr(schema, "fields"):
        return [(f.name, f.dataType.simpleString()) for f in schema.fields]
    return ddl_fields(str(schema))
