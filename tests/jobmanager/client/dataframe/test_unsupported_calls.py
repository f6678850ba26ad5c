"""What Tidal's DataFrame API cannot run fails at the call, in one line naming the method and
the line of the script that called it, with the alternative, before anything is submitted or
written. One test per kind of call: RDDs, Python UDFs, foreach, streaming, and the rest."""

from __future__ import annotations

import os
import sys

import pytest

from jobmanager.client.dataframe import UnsupportedCallError, functions as F

HERE = os.path.relpath(__file__)


def refused(call, method: str) -> str:
    """The message of ``call()``'s refusal, checked to name ``method`` and the line of this
    file that made the call (the caller's caller: the line that invoked ``refused``)."""
    line = sys._getframe(1).f_lineno
    with pytest.raises(UnsupportedCallError) as raised:
        call()
    message = str(raised.value)
    assert message.startswith(f"{HERE}:{line}: {method} is not supported on Tidal: "), message
    assert "\n" not in message
    return message


def test_an_rdd(spark, sales):
    df = spark.read.parquet(sales)
    message = refused(lambda: df.rdd, "DataFrame.rdd")
    assert "arrow(fn)" in message
    refused(lambda: spark.sparkContext, "SparkSession.sparkContext")


def test_a_python_udf(spark, sales):
    message = refused(lambda: F.udf(lambda x: x + 1, "int"), "functions.udf")
    assert "built-in functions" in message and "arrow(fn)" in message
    refused(lambda: F.pandas_udf(lambda s: s, "int"), "functions.pandas_udf")
    refused(lambda: spark.udf.register("plus", lambda x: x + 1), "spark.udf.register")
    df = spark.read.parquet(sales)
    refused(lambda: df.mapInPandas(lambda it: it, "region string"), "DataFrame.mapInPandas")
    grouped = df.groupBy("region")
    refused(lambda: grouped.applyInPandas(lambda p: p, "rg string"), "GroupedData.applyInPandas")


def test_foreach(spark, sales):
    df = spark.read.parquet(sales)
    message = refused(lambda: df.foreach(print), "DataFrame.foreach")
    assert "collect()" in message
    refused(lambda: df.foreachPartition(print), "DataFrame.foreachPartition")


def test_streaming(spark, sales):
    message = refused(lambda: spark.readStream, "SparkSession.readStream")
    assert "batch" in message
    refused(lambda: spark.read.parquet(sales).writeStream, "DataFrame.writeStream")


def test_a_format_or_table_tidal_does_not_write_leaves_nothing(spark, sales, tmp_path):
    df = spark.read.parquet(sales)
    out = tmp_path / "out"
    refused(lambda: df.write.bucketBy(4, "region").parquet(str(out)), "write.bucketBy")
    refused(lambda: df.write.saveAsTable("sales_copy"), "write.saveAsTable")
    refused(lambda: df.write.format("json").save(str(out)), "write.json")
    refused(lambda: spark.read.json(sales), "read.json")
    assert not out.exists()


def test_a_function_sqlframe_lacks_is_named(spark):
    refused(lambda: F.no_such_function("x"), "functions.no_such_function")


def test_pyspark_bound_to_tidal_refuses_what_it_does_not_give(tmp_path):
    from jobmanager.client.dataframe.binding import bound_to_tidal

    with bound_to_tidal():
        import pyspark
        import pyspark.sql.streaming as streaming

        refused(lambda: pyspark.SparkContext, "pyspark.SparkContext")
        refused(lambda: streaming.DataStreamReader, "pyspark.sql.streaming.DataStreamReader")
