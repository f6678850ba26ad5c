"""TPC-H's 22 queries written as PySpark DataFrame programs (``examples.tpch_dataframes``) give,
under plain PySpark, DuckDB's answers to the query texts, over dbgen's tables at scale 0.01:
same columns in the same order, same rows (in the same order where the text orders them)."""

from __future__ import annotations

import pytest

from examples.compare import query_is_ordered, sql_difference
from examples.tpch_dataframes import QUERIES, run
from examples.tpch_dbgen import duckdb_answer, generate, queries

pytestmark = pytest.mark.spark

SCALE = 0.01


@pytest.fixture(scope="module")
def dbgen_data(tmp_path_factory):
    """The directory of the 8 tables, and their paths by name."""
    directory = tmp_path_factory.mktemp("tpch-dbgen")
    return directory, generate(directory, SCALE)


def test_there_is_one_function_per_query():
    assert sorted(QUERIES) == sorted(queries()) == list(range(1, 23))


@pytest.mark.parametrize("number", range(1, 23))
def test_the_dataframe_query_gives_duckdbs_answer(number, dbgen_data, spark_session):
    directory, tables = dbgen_data
    text = queries()[number]
    expected = duckdb_answer(directory, text)
    actual = run(spark_session, tables, number).toArrow()
    assert actual.column_names == expected.column_names
    assert expected.num_rows > 0  # the parameters select something at this scale
    assert sql_difference(actual, expected, query_is_ordered(text)) is None
