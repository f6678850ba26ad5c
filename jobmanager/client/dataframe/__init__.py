"""PySpark's DataFrame API on Tidal, in the client: each action a Tidal job.

    from jobmanager.client.dataframe import SparkSession, functions as F

    spark = SparkSession.builder.getOrCreate()
    orders = spark.read.parquet("/data/orders")
    orders.groupBy("o_orderstatus").agg(F.sum("o_totalprice")).show()

``tidal run pipeline.py`` runs an unchanged PySpark script with ``pyspark`` bound to this package
(``jobmanager.client.dataframe.binding``). The transformations are sqlframe's (on sqlglot),
building Spark SQL; Tidal's planner cuts each action's query into a job, its scheduler runs it,
and the TaskManagers run each piece with real PySpark.
"""

from sqlframe.base.types import Row

from jobmanager.client.dataframe import functions, types
from jobmanager.client.dataframe.column import Column
from jobmanager.client.dataframe.dataframe import DataFrame, GroupedData
from jobmanager.client.dataframe.jobs import ActionFailedError, TidalAnalysisException
from jobmanager.client.dataframe.readwriter import DataFrameReader, DataFrameWriter
from jobmanager.client.dataframe.session import SparkSession
from jobmanager.client.dataframe.unsupported import UnsupportedCallError
from jobmanager.client.dataframe.window import Window, WindowSpec


def _install_refusals() -> None:
    from jobmanager.client.dataframe import dataframe, readwriter, session, statistics
    from jobmanager.client.dataframe.catalog import Catalog
    from jobmanager.client.dataframe.refusals import install

    install(
        {
            "DataFrame": DataFrame,
            "Column": Column,
            "GroupedData": GroupedData,
            "DataFrameReader": readwriter.DataFrameReader,
            "DataFrameWriter": readwriter.DataFrameWriter,
            "SparkSession": session.SparkSession,
            "Catalog": Catalog,
            "DataFrameStatFunctions": statistics.DataFrameStatFunctions,
            "DataFrameNaFunctions": statistics.DataFrameNaFunctions,
        }
    )
    del dataframe


_install_refusals()

__all__ = [
    "ActionFailedError",
    "Column",
    "DataFrame",
    "DataFrameReader",
    "DataFrameWriter",
    "GroupedData",
    "Row",
    "SparkSession",
    "TidalAnalysisException",
    "UnsupportedCallError",
    "Window",
    "WindowSpec",
    "functions",
    "types",
]
