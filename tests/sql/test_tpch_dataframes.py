"""TPC-H's 22 queries as a PySpark user writes them, DataFrame programs (``examples
.tpch_dataframes``), run unchanged on Tidal: the module is loaded with ``pyspark`` bound to
Tidal (as ``tidal run`` binds a script's), so its ``F`` builds Spark SQL in the client and each
``toArrow`` is one Tidal job, planned and run by the adaptive scheduler with real PySpark in the
TaskManagers. Each answer equals plain PySpark's to the same program over dbgen's tables at
scale 0.01, and PySpark's equals DuckDB's to the query text (an answer nobody here wrote).
Tasks are sized small and the tables cut into small row groups (``tests/sql/conftest.py``), so
the plans really cross their exchanges."""

from __future__ import annotations

import importlib
import sys

import pytest

from examples.compare import query_is_ordered, sql_difference
from examples.tpch_dataframes import QUERIES
from examples.tpch_dbgen import duckdb_answer, queries
from tests.sql.test_tpch_sql import CONFIG

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

PACKAGE = "examples.tpch_dataframes"


def _imported_afresh(package: str):
    """``package`` and its modules imported again, under whatever ``pyspark`` is bound now: the
    import above cached them with the real PySpark, so they are set aside, and put back after."""
    cached = {
        name: module
        for name, module in sys.modules.items()
        if name == package or name.startswith(package + ".")
    }
    parent, _, child = package.rpartition(".")
    for name in cached:
        del sys.modules[name]
    try:
        return importlib.import_module(package)
    finally:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
        sys.modules.update(cached)
        setattr(sys.modules[parent], child, cached[package])


@pytest.fixture(scope="module")
def on_tidal(ray_cluster):
    """The program's package with ``pyspark`` bound to Tidal, and a Tidal session."""
    from jobmanager.client.dataframe.binding import bound_to_tidal

    with bound_to_tidal(CONFIG):
        program = _imported_afresh(PACKAGE)
        from pyspark.sql import SparkSession

        session = SparkSession.builder.getOrCreate()
    yield program, session
    session.stop()


def test_there_is_one_program_per_query():
    assert sorted(QUERIES) == sorted(queries()) == list(range(1, 23))


def test_every_module_of_the_program_runs_on_tidal_where_bound(on_tidal):
    """A module left with the real PySpark would build Spark's columns into Tidal's queries."""
    program, _ = on_tidal
    modules = [program.columns, program.queries_1_to_11, program.queries_12_to_22]
    assert {module.F.__name__ for module in modules} == {"jobmanager.client.dataframe.functions"}
    assert QUERIES[1].__globals__["F"].__name__ == "pyspark.sql.functions"


@pytest.mark.parametrize("number", range(1, 23), ids=lambda number: f"q{number:02d}")
def test_the_dataframe_program_answers_on_tidal_as_on_pyspark(
    number, on_tidal, spark_session, tpch_dbgen_data, tpch_dbgen_tables
):
    text = queries()[number]
    ordered = query_is_ordered(text)
    on_pyspark = QUERIES[number](spark_session, tpch_dbgen_tables).toArrow()
    assert on_pyspark.num_rows > 0  # the parameters select something at this scale
    assert sql_difference(on_pyspark, duckdb_answer(tpch_dbgen_data, text), ordered) is None
    program, session = on_tidal
    answer = program.QUERIES[number](session, tpch_dbgen_tables).toArrow()
    assert answer.column_names == on_pyspark.column_names
    assert sql_difference(answer, on_pyspark, ordered) is None
