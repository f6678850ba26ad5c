"""Every public name of PySpark's DataFrame API is Tidal's too, and either works (a behaviour
test against PySpark calls it: ``EXERCISED`` of ``test_api_behaviour`` and the older tests'
names below) or raises Tidal's one-line refusal naming it. Walks PySpark 4's classes by
``dir()`` and ``pyspark.sql.functions.__all__``; no JVM, no cluster (a refusal is raised in the
client). No name may do neither."""

from __future__ import annotations

import pytest

from tests.jobmanager.client.dataframe.test_api_behaviour import EXERCISED as BEHAVIOUR
from tests.jobmanager.client.dataframe.test_functions_behaviour import EXERCISED as FUNCTIONS
from tests.jobmanager.client.dataframe.test_methods_behaviour import EXERCISED as METHODS

# called by the older behaviour tests (test_actions_on_ray, test_session_in_the_client)
OLDER = frozenset(
    """
DataFrame.join DataFrame.crossJoin DataFrame.orderBy DataFrame.select DataFrame.where
DataFrame.groupBy DataFrame.agg DataFrame.withColumn DataFrame.union DataFrame.distinct
DataFrame.unionByName DataFrame.dropDuplicates DataFrame.count DataFrame.first DataFrame.take
DataFrame.isEmpty DataFrame.toPandas DataFrame.limit DataFrame.show DataFrame.collect
SparkSession.createDataFrame SparkSession.read SparkSession.builder SparkSession.stop
SparkSession.conf DataFrameReader.parquet DataFrameReader.csv DataFrameReader.option
DataFrameReader.schema Column.desc_nulls_last Column.over Column.alias
functions.sum functions.count functions.countDistinct functions.row_number functions.lag
functions.col functions.desc functions.avg functions.max functions.mean functions.upper
functions.round functions.lit
""".split()
)
WORKS = BEHAVIOUR | FUNCTIONS | METHODS | OLDER


def _surface():
    from pyspark.sql import (
        Catalog,
        Column,
        DataFrame,
        DataFrameNaFunctions,
        DataFrameReader,
        DataFrameStatFunctions,
        DataFrameWriter,
        GroupedData,
        SparkSession,
        Window,
        WindowSpec,
    )
    from pyspark.sql import functions

    classes = [
        DataFrame,
        Column,
        GroupedData,
        Window,
        WindowSpec,
        DataFrameReader,
        DataFrameWriter,
        SparkSession,
        Catalog,
        DataFrameNaFunctions,
        DataFrameStatFunctions,
    ]
    names = [(c.__name__, n) for c in classes for n in dir(c) if not n.startswith("_")]
    return names + [("functions", n) for n in functions.__all__]


def _tidal_objects(spark):
    from jobmanager.client.dataframe import Window
    from jobmanager.client.dataframe import functions as F

    df = spark.createDataFrame([(1, "a")], "id int, name string")
    return {
        "DataFrame": df,
        "Column": F.col("id"),
        "GroupedData": df.groupBy("id"),
        "Window": Window,
        "WindowSpec": Window.partitionBy("id"),
        "DataFrameReader": spark.read,
        "DataFrameWriter": df.write,
        "SparkSession": spark,
        "Catalog": spark.catalog,
        "DataFrameNaFunctions": df.na,
        "DataFrameStatFunctions": df.stat,
        "functions": F,
    }


def _refuses(owner, name: str) -> bool:
    from jobmanager.client.dataframe import UnsupportedCallError

    for count in range(4):  # the refusal comes whatever the arguments: try a few
        try:
            value = getattr(owner, name)
            if callable(value) and not isinstance(value, type):
                value(*[None] * count)
        except UnsupportedCallError as error:
            return "\n" not in str(error) and f"{name}" in str(error)
        except TypeError:
            continue
        except Exception:  # noqa: BLE001 - anything else is neither a refusal nor an answer
            return False
        return False
    return False


def test_every_name_works_or_refuses(spark, capsys):
    from jobmanager.client.dataframe.jobs import QueryRunner

    def no_cluster():
        raise AssertionError("the surface test runs no job")

    QueryRunner.client_factory, saved = no_cluster, QueryRunner.client_factory
    try:
        objects = _tidal_objects(spark)
        works, refuses, neither = [], [], []
        for owner, name in _surface():
            full = f"{owner}.{name}"
            if full in WORKS:
                works.append(full)
            elif _refuses(objects[owner], name):
                refuses.append(full)
            else:
                neither.append(full)
    finally:
        QueryRunner.client_factory = saved
    with capsys.disabled():
        print(
            f"\nPySpark's API on Tidal: {len(works)} work (a behaviour test calls them), "
            f"{len(refuses)} refuse, {len(neither)} neither"
        )
    assert not neither, f"neither works (tested) nor refuses: {neither}"
