"""``pyspark.sql.functions`` on Tidal give PySpark's values: a program a kind of argument
(``function_calls``: numeric, string, dates, arrays and maps, misc, aggregates, windows)
selects all its calls at once over the behaviour tests' table, run by PySpark and by Tidal's
layer in the same session (``one_session_client``), rows compared (floats to nine digits, an
aggregate's order of summing being the partitioning's). ``EXERCISED`` names every call."""

from __future__ import annotations

import math

import pytest

from jobmanager.client.dataframe import Window as TidalWindow
from jobmanager.client.dataframe import functions as TF
from tests.jobmanager.client.dataframe import function_calls as calls
from tests.jobmanager.client.dataframe.one_session_client import one_session_tidal
from tests.jobmanager.client.dataframe.test_api_behaviour import ROWS, SCHEMA

pytestmark = pytest.mark.spark

GROUPS = dict(calls.GROUPS, aggregates=calls.AGGREGATES, windows=calls.WINDOWS)
EXERCISED = frozenset(
    f"functions.{name}" for group in GROUPS.values() for name in group
) | frozenset(f"functions.{name}" for name in [*calls.RIDERS, *calls.GENERATORS])


def _plain(value):
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.9g}")
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return value


def _answer(kind: str, session, F, W):
    p = session.createDataFrame(ROWS, SCHEMA)
    window = W.partitionBy("team").orderBy("id")
    selected = [
        (call(F, F.col).over(window) if kind == "windows" else call(F, F.col)).alias(name)
        for name, call in GROUPS[kind].items()
    ]
    if kind == "aggregates":
        frame = p.groupBy("team").agg(*selected)
    else:
        frame = p.select("id", *selected)
    return frame.columns, sorted((_plain(tuple(r)) for r in frame.collect()), key=repr)


@pytest.fixture(scope="module")
def tidal(spark_session):
    session = one_session_tidal(spark_session)
    yield session
    session.stop()


@pytest.mark.parametrize("kind", list(GROUPS))
def test_a_group_of_functions_gives_pysparks_values(kind, tidal, spark_session):
    from pyspark.sql import Window
    from pyspark.sql import functions as SF

    expected = _answer(kind, spark_session, SF, Window)
    assert _answer(kind, tidal, TF, TidalWindow) == expected


def test_generators_give_pysparks_rows(tidal, spark_session):
    """Each generator (``explode``, ``stack``, ``json_tuple``, ...) and ``grouping``, in a
    program of its own, columns named as Spark names them."""
    from pyspark.sql import functions as SF

    wrong = []
    for name, program in calls.GENERATORS.items():
        expected = program(spark_session.createDataFrame(ROWS, SCHEMA), SF)
        actual = program(tidal.createDataFrame(ROWS, SCHEMA), TF)
        rows = [
            sorted((_plain(tuple(r)) for r in f.collect()), key=repr) for f in (expected, actual)
        ]
        if (actual.columns, rows[1]) != (expected.columns, rows[0]):
            wrong.append(
                f"{name}: PySpark {expected.columns} {rows[0]}, Tidal {actual.columns} {rows[1]}"
            )
    assert not wrong, "\n".join(wrong)
