"""The DataFrame API's everyday calls on Tidal give what PySpark gives: the same program on the
tests' PySpark session and on a Tidal session (each action a job on the local Ray cluster),
rows compared exactly, in order where the program orders them. Joins of every kind with null
keys, sorts with nulls, unions, distinct, windows, local rows, and each action's return."""

from __future__ import annotations

import datetime
import decimal

import pytest

from jobmanager.client.dataframe import SparkSession as TidalSession
from jobmanager.client.dataframe import Window as TidalWindow
from jobmanager.client.dataframe import functions as TF
from jobmanager.model.config import MAX_SLOTS, NUMBER_OF_TASK_SLOTS, RESTART_STRATEGY

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,
    RESTART_STRATEGY.key: "none",
}
PEOPLE = [(1, "ada", 10, decimal.Decimal("1.50"), datetime.date(2024, 1, 2)),
          (2, "bob", None, decimal.Decimal("2.25"), datetime.date(2024, 1, 3)),
          (3, None, 10, None, None),
          (4, "eve", 30, decimal.Decimal("0.10"), datetime.date(2024, 1, 2))]  # fmt: skip
PEOPLE_SCHEMA = "id int, name string, team int, score decimal(5,2), joined date"
TEAMS = [(10, "red"), (30, "blue"), (40, "green"), (None, "nobody")]


@pytest.fixture(scope="module")
def tidal(ray_cluster):
    session = TidalSession.builder.config(map=CONFIG).getOrCreate()
    yield session
    session.stop()


def frames(session):
    people = session.createDataFrame(PEOPLE, PEOPLE_SCHEMA)
    teams = session.createDataFrame(TEAMS, "team int, colour string")
    return people, teams


def same(program, tidal, spark_session, ordered: bool = False):
    """``program(people, teams, functions, Window)`` gives the same on both sessions."""
    from pyspark.sql import Window
    from pyspark.sql import functions as SF

    expected = program(*frames(spark_session), SF, Window)
    actual = program(*frames(tidal), TF, TidalWindow)
    if isinstance(expected, list):
        expected, actual = [tuple(r) for r in expected], [tuple(r) for r in actual]
        if not ordered:
            expected, actual = sorted(expected, key=repr), sorted(actual, key=repr)
    assert actual == expected


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "left_semi", "left_anti"])
def test_a_join_of_every_kind_with_null_keys(how, tidal, spark_session):
    same(lambda p, t, F, W: p.join(t, "team", how).collect(), tidal, spark_session)


def test_a_cross_join_and_a_join_on_an_expression(tidal, spark_session):
    same(lambda p, t, F, W: p.crossJoin(t.select("colour")).collect(), tidal, spark_session)
    same(
        lambda p, t, F, W: (
            p.join(t, (p.team == t.team) & (t.colour != "red"), "left")
            .select("id", "colour")
            .collect()
        ),
        tidal,
        spark_session,
    )


def test_sorts_put_nulls_where_spark_does(tidal, spark_session):
    same(lambda p, t, F, W: p.orderBy("team", F.desc("name")).collect(), tidal, spark_session, True)
    same(
        lambda p, t, F, W: p.orderBy(F.col("score").desc_nulls_last(), "id").collect(),
        tidal,
        spark_session,
        True,
    )


def test_aggregates_windows_unions_and_distinct(tidal, spark_session):
    same(
        lambda p, t, F, W: (
            p.groupBy("team").agg(F.sum("score"), F.count("*"), F.countDistinct("joined")).collect()
        ),
        tidal,
        spark_session,
    )
    same(
        lambda p, t, F, W: (
            p.withColumn("rank", F.row_number().over(W.partitionBy("team").orderBy("id")))
            .withColumn("before", F.lag("score").over(W.partitionBy("team").orderBy("id")))
            .collect()
        ),
        tidal,
        spark_session,
    )
    same(
        lambda p, t, F, W: p.select("id").union(t.select("team")).distinct().collect(),
        tidal,
        spark_session,
    )
    same(
        lambda p, t, F, W: p.select("id", "name").unionByName(p.select("name", "id")).collect(),
        tidal,
        spark_session,
    )
    same(
        lambda p, t, F, W: p.dropDuplicates(["team"]).select("team").collect(), tidal, spark_session
    )


def test_each_action_returns_what_pysparks_does(tidal, spark_session, capsys):
    same(lambda p, t, F, W: p.count(), tidal, spark_session)
    same(lambda p, t, F, W: tuple(p.orderBy("id").first()), tidal, spark_session)
    same(lambda p, t, F, W: [tuple(r) for r in p.orderBy("id").take(2)], tidal, spark_session)
    same(lambda p, t, F, W: p.where(F.col("id") > 9).isEmpty(), tidal, spark_session)
    same(lambda p, t, F, W: str(p.orderBy("id").toPandas().to_dict("list")), tidal, spark_session)
    same(
        lambda p, t, F, W: p.orderBy("id").limit(3).select("id").collect(),
        tidal,
        spark_session,
        True,
    )
    for session in (spark_session, tidal):
        frames(session)[0].orderBy("id").select("id", "name", "score").show(3)
    pyspark_text, tidal_text = capsys.readouterr().out.split("only showing top 3 rows\n")[:2]
    assert tidal_text == pyspark_text
