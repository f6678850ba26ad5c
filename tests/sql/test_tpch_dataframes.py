"""TPC-H's 22 queries as a PySpark user writes them, DataFrame programs (``examples
.tpch_dataframes``), run unchanged on Tidal: the module is loaded with ``pyspark`` bound to
Tidal (as ``tidal run`` binds a script's), so its ``F`` builds Spark SQL in the client and each
``toArrow`` is one Tidal job, planned and run by the adaptive scheduler with real PySpark in the
TaskManagers. Each answer equals plain PySpark's to the same program over dbgen's tables at
scale 0.01, and PySpark's equals DuckDB's to the query text (an answer nobody here wrote).
Tasks are sized small and the tables cut into small row groups (``tests/sql/conftest.py``), so
the plans really cross their exchanges."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from examples.compare import query_is_ordered, sql_difference
from examples.tpch_dataframes import QUERIES
from examples.tpch_dbgen import duckdb_answer, queries
from tests.sql.test_tpch_sql import CONFIG

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "tpch_dataframes" / "__init__.py"


@pytest.fixture(scope="module")
def on_tidal(ray_cluster):
    """The program's queries with ``pyspark`` bound to Tidal, and a Tidal session."""
    from jobmanager.client.dataframe.binding import bound_to_tidal

    with bound_to_tidal(CONFIG):
        program = runpy.run_path(str(PROGRAM))
        from pyspark.sql import SparkSession

        session = SparkSession.builder.getOrCreate()
    yield program["QUERIES"], session
    session.stop()


def test_there_is_one_program_per_query():
    assert sorted(QUERIES) == sorted(queries()) == list(range(1, 23))


@pytest.mark.parametrize("number", range(1, 23), ids=lambda number: f"q{number:02d}")
def test_the_dataframe_program_answers_on_tidal_as_on_pyspark(number, on_tidal, spark_session,
                                                              tpch_dbgen_data, tpch_dbgen_tables):  # fmt: skip
    text = queries()[number]
    ordered = query_is_ordered(text)
    on_pyspark = QUERIES[number](spark_session, tpch_dbgen_tables).toArrow()
    assert on_pyspark.num_rows > 0  # the parameters select something at this scale
    assert sql_difference(on_pyspark, duckdb_answer(tpch_dbgen_data, text), ordered) is None
    tidal_queries, session = on_tidal
    answer = tidal_queries[number](session, tpch_dbgen_tables).toArrow()
    assert answer.column_names == on_pyspark.column_names
    assert sql_difference(answer, on_pyspark, ordered) is None
