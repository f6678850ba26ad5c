"""Tidal's DataFrame session in the client, with no cluster: the names Spark gives columns,
PySpark's error for a column that is not there (at the line that named it), jobs named after
the action's line, ``show``'s text, Spark's CSV reading options, and ``pyspark`` bound to
Tidal only inside ``bound_to_tidal``."""

from __future__ import annotations

import datetime
import decimal
import os
import sys

import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException

from jobmanager.client.dataframe import functions as F
from jobmanager.client.dataframe.rows import show_string, to_rows
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS

HERE = os.path.relpath(__file__)


def test_unaliased_columns_are_named_as_spark_names_them(spark, sales):
    df = spark.read.parquet(sales)
    grouped = df.groupBy("region").agg(
        F.sum("amount"), F.avg("units"), F.count("*"), F.max(F.col("units") * 2), F.mean("amount")
    )
    assert grouped.columns == [
        "region",
        "sum(amount)",
        "avg(units)",
        "count(1)",
        "max((units * 2))",
        "avg(amount)",
    ]
    assert df.select(F.upper("region"), F.round("amount", 1)).columns == [
        "upper(region)",
        "round(amount, 1)",
    ]
    assert df.groupBy("region").count().columns == ["region", "count"]


def test_a_missing_column_is_pysparks_analysis_exception_at_the_line_that_named_it(spark, sales):
    df = spark.read.parquet(sales)
    with pytest.raises(AnalysisException) as raised:
        df.select("regoin")
    line = sys._getframe().f_lineno - 1
    assert raised.value.getCondition() == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert str(raised.value).startswith(f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] {HERE}:{line}: ")
    assert "`regoin`" in str(raised.value)
    with pytest.raises(AnalysisException):
        df.where(F.col("amount") > 1).groupBy("nowhere").count()


def test_a_jobs_name_is_the_script_and_the_actions_line(spark, sales):
    df = spark.read.parquet(sales).groupBy("region").agg(F.sum("units"))
    sql = spark._query_sql(df._get_expressions(optimize=False))
    planned, _, here = spark.runner.plan(sql, "collect")
    line = sys._getframe().f_lineno - 1
    assert here == f"{HERE}:{line}"
    assert planned.graph.name == f"{os.path.basename(HERE)}:{line} collect"
    assert planned.columns == ("region", "sum(units)")


def test_show_prints_sparks_table():
    rows = [("east", 1.5, True, None), ("a region name longer than twenty", 1e10, False, 3)]
    text = show_string(["region", "amount", "flag", "n"], rows, more=True, truncate=True)
    assert text == (
        "+--------------------+------+-----+----+\n"
        "|              region|amount| flag|   n|\n"
        "+--------------------+------+-----+----+\n"
        "|                east|   1.5| true|NULL|\n"
        "|a region name lon...|1.0E10|false|   3|\n"
        "+--------------------+------+-----+----+\n"
        "only showing top 2 rows\n"
    )
    assert show_string(["a"], [("x",)], more=False, truncate=False) == (
        "+---+\n|a  |\n+---+\n|x  |\n+---+\n"
    )


def test_rows_keep_decimals_dates_and_local_times():
    table = pa.table(
        {
            "d": pa.array([decimal.Decimal("1.50")], pa.decimal128(5, 2)),
            "day": pa.array([datetime.date(2024, 1, 2)]),
            "at": pa.array([datetime.datetime(2024, 1, 2, 12)], pa.timestamp("us", "UTC")),
        }
    )
    (row,) = to_rows(table, "Europe/Paris")
    assert row.d == decimal.Decimal("1.50") and row.day == datetime.date(2024, 1, 2)
    assert row.at == datetime.datetime(2024, 1, 2, 13)  # the session's wall clock, no zone
    assert row.asDict() == {"d": row.d, "day": row.day, "at": row.at}


def test_csv_reads_as_spark_reads_it(spark, tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("name,age,joined\nada,36,2024-01-02\nbob,,2024-02-03\n")
    assert spark.read.csv(str(path)).columns == ["_c0", "_c1", "_c2"]  # no header by default
    strings = spark.read.csv(str(path), header=True)
    assert strings.columns == ["name", "age", "joined"]
    assert [f.dataType.simpleString() for f in strings.schema.fields] == ["string"] * 3
    inferred = spark.read.option("header", True).option("inferSchema", True).csv(str(path))
    assert [f.dataType.simpleString() for f in inferred.schema.fields] == [
        "string",
        "bigint",
        "date",
    ]
    typed = spark.read.schema("who string, years int, since date").csv(str(path), header=True)
    assert typed.columns == ["who", "years", "since"]
    assert [f.dataType.simpleString() for f in typed.schema.fields] == ["string", "int", "date"]


def test_pyspark_is_tidals_only_inside_the_binding():
    import pyspark.sql.functions as real_functions

    from jobmanager.client.dataframe import SparkSession
    from jobmanager.client.dataframe.binding import bound_to_tidal

    with bound_to_tidal({NUMBER_OF_TASK_SLOTS.key: 2}):
        from pyspark.sql import SparkSession as Bound
        from pyspark.sql import functions as bound_functions
        from pyspark.sql.utils import AnalysisException as Caught

        assert Bound is SparkSession and bound_functions is F
        assert Caught is AnalysisException
        session = Bound.builder.config("spark.sql.shuffle.partitions", 4).getOrCreate()
        assert session.conf.get(NUMBER_OF_TASK_SLOTS.key) == 2
        assert session.runner.settings()[NUMBER_OF_TASK_SLOTS.key] == 2
        session.stop()
    import pyspark.sql.functions as after

    assert after is real_functions
