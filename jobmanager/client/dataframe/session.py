"""``SparkSession`` on Tidal: PySpark's DataFrame API in the client, each action one Tidal job.

The API is sqlframe's (on sqlglot): its DataFrames follow PySpark's signatures and build a query
in Spark's dialect, with no JVM in the client. Chosen over writing that API again because it
already covers PySpark's DataFrame, Column, functions, window and reader/writer surface and
generates the Spark SQL Tidal's planner takes. Tidal adds the engine underneath: an action
(``collect``, ``count``, ``show``, ``toPandas``, ``toArrow``, ``first``, ``take``, ``write``)
turns the DataFrame into its SQL, plans it with Tidal's planner (``jobmanager.planner``) and
submits one job, named after the script's file and the action's line, which Tidal's adaptive
scheduler runs and recovers; the TaskManagers run each piece with real PySpark.

    from jobmanager.client.dataframe import SparkSession, functions as F
    spark = SparkSession.builder.getOrCreate()
    spark.read.parquet("/data/orders").groupBy("o_orderstatus").count().show()

Options: a key the builder's ``config`` sets that is not Spark's (``spark.*``) is a Tidal option
(``taskmanager.numberOfTaskSlots``, ...); ``tidal run``'s ``-D`` options come first.
"""

from __future__ import annotations

import typing as t

from sqlframe.base.session import _BaseSession
from sqlglot import exp
from sqlglot.helper import ensure_list

from jobmanager.client.dataframe.catalog import Catalog, UDFRegistration
from jobmanager.client.dataframe.dataframe import DataFrame, Table
from jobmanager.client.dataframe.jobs import QueryRunner
from jobmanager.client.dataframe.readwriter import DataFrameReader, DataFrameWriter
from jobmanager.client.dataframe.rows import to_pandas, to_rows
from jobmanager.client.dataframe.sources import ddl_fields
from jobmanager.client.dataframe.unsupported import unsupported

if t.TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["SparkSession"]


class SparkSession(
    _BaseSession[
        Catalog, DataFrameReader, DataFrameWriter, DataFrame, Table, object, UDFRegistration
    ]
):
    _catalog = Catalog
    _reader = DataFrameReader
    _writer = DataFrameWriter
    _df = DataFrame
    _table = Table
    _udf_registration = UDFRegistration

    def __init__(self, conn: t.Any = None, *args, **kwargs) -> None:
        if not hasattr(self, "runner"):
            super().__init__(None)
            self.runner = QueryRunner()
        options = {k: v for k, v in kwargs.items() if not k.startswith("sqlframe.")}
        self.runner.configure(options)

    @property
    def _has_connection(self) -> bool:
        return True

    @property
    def _conn(self) -> t.Any:
        raise unsupported("SparkSession connection", "Tidal's session has no JDBC connection")

    def _execute(self, sql: str) -> None:
        raise unsupported("SQL statement", "only queries run on Tidal", None)

    def _query_sql(self, expressions, quote_identifiers: bool = True) -> str:
        """The one query an action runs (several statements are DDL Tidal has no use for)."""
        expressions = ensure_list(expressions)
        if len(expressions) != 1 or not isinstance(expressions[0], (exp.Query, str)):
            raise unsupported(
                "a statement other than a query (CREATE, INSERT, cache)", "Tidal runs queries", None
            )
        expression = expressions[0]
        if isinstance(expression, str):
            return expression
        return self._to_sql(expression, quote_identifiers=quote_identifiers)

    def _collect(
        self,
        expressions,
        *,
        quote_identifiers: bool = True,
        skip_normalization: bool = False,
        skip_rows: bool = False,
    ) -> list:
        table = self.runner.collect(self._query_sql(expressions, quote_identifiers), "collect")
        return [] if skip_rows else to_rows(table, self._zone)

    def _fetchdf(self, expressions, *, quote_identifiers: bool = True) -> pd.DataFrame:
        sql = self._query_sql(expressions, quote_identifiers)
        return to_pandas(self.runner.collect(sql, "toPandas"), self._zone)

    @property
    def _zone(self) -> str | None:
        return self.runner.conf.get("spark.sql.session.timeZone")

    def _fetch_arrow(self, expressions) -> pa.Table:
        return self.runner.collect(self._query_sql(expressions), "toArrow")

    def createDataFrame(self, data, schema=None, samplingRatio=None, verifySchema=True):  # noqa: N802,N803
        """Local rows as a DataFrame; a DDL schema with a ``decimal(p,s)`` is read whole."""
        if isinstance(schema, str) and " " in schema.strip():
            schema = dict(ddl_fields(schema))
        return super().createDataFrame(data, schema)

    @property
    def sparkContext(self):
        raise unsupported("SparkSession.sparkContext", "Tidal has no SparkContext (RDDs)", "rdd")

    @property
    def readStream(self):
        raise unsupported("SparkSession.readStream", "Tidal runs batch jobs", "streaming")

    @property
    def streams(self):
        raise unsupported("SparkSession.streams", "Tidal runs batch jobs", "streaming")

    @property
    def conf(self):
        return self.runner.conf

    @property
    def version(self) -> str:
        import pyspark

        return pyspark.__version__ if hasattr(pyspark, "__version__") else "tidal"

    def stop(self) -> None:
        self.runner.stop()
        _BaseSession._instance = None

    def __enter__(self) -> SparkSession:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    class Builder(_BaseSession.Builder):
        DEFAULT_INPUT_DIALECT = "spark"
        DEFAULT_OUTPUT_DIALECT = "spark"
        DEFAULT_EXECUTION_DIALECT = "spark"

        def config(self, key=None, value=None, conf=None, *, map=None):
            if conf is not None and hasattr(conf, "getAll"):
                for k, v in conf.getAll():
                    self._set_config(k, v)
            return super().config(key, value, map=map)

        def appName(self, name: str) -> SparkSession.Builder:
            return self.config("spark.app.name", name)

        def master(self, master: str) -> SparkSession.Builder:
            return self.config("spark.master", master)

        def enableHiveSupport(self) -> SparkSession.Builder:
            return self

        @property
        def session(self) -> SparkSession:
            return SparkSession(**self._session_kwargs)

        def getOrCreate(self) -> SparkSession:
            return super().getOrCreate()  # type: ignore[return-value]

        def create(self) -> SparkSession:
            return self.getOrCreate()

    builder = Builder()

    @classmethod
    def getActiveSession(cls) -> SparkSession | None:
        return _BaseSession._instance if isinstance(_BaseSession._instance, cls) else None

    @classmethod
    def active(cls) -> SparkSession:
        return cls.getActiveSession() or cls.builder.getOrCreate()
