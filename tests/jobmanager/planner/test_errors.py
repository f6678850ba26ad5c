"""Each mistake in a query is refused while planning, in Tidal's words, saying where.
(That nothing runs: ``tests/jobmanager/client/test_client_sql.py`` submits them.)"""

from __future__ import annotations

import pytest

from jobmanager.errors import (
    SqlError,
    SqlSyntaxError,
    SqlTypeError,
    TableError,
    TidalError,
    UnknownColumnError,
    UnknownTableError,
    UnsupportedSqlError,
)
from jobmanager.model.operators import ParquetSink
from jobmanager.planner import Catalog, plan_sql


def refused(catalog, query: str) -> SqlError:
    with pytest.raises(SqlError) as caught:
        plan_sql(query, catalog, ParquetSink("/tmp/tidal-planner-errors-out", overwrite=True))
    assert isinstance(caught.value, TidalError)
    return caught.value


def test_a_syntax_error_names_its_line_column_and_token(catalog):
    error = refused(catalog, "SELECT s\nFROM facts\nWHERE d >")
    assert isinstance(error, SqlSyntaxError)
    assert (error.line, error.column) == (3, 9)
    assert str(error).startswith("line 3, column 9: syntax error at '>'")


def test_an_unknown_table_lists_the_known_ones(catalog):
    error = refused(catalog, "SELECT s FROM fcts")
    assert isinstance(error, UnknownTableError)
    assert (error.line, error.column) == (1, 15)
    assert "unknown table 'fcts'; did you mean 'facts'?" in str(error)
    assert "The known tables are dims, events, facts, others" in str(error)


def test_an_unknown_column_names_the_closest_match(catalog):
    error = refused(catalog, "SELECT s,\n  vv FROM facts")
    assert isinstance(error, UnknownColumnError)
    assert (error.line, error.column) == (2, 3)
    assert "unknown column 'vv'; did you mean 'v'?" in str(error)
    qualified = refused(catalog, "SELECT facts.nme FROM facts")
    assert "unknown column 'nme'" in str(qualified)


def test_an_ambiguous_column_names_the_tables_that_have_it(catalog):
    error = refused(catalog, "SELECT k FROM facts JOIN dims ON facts.k = dims.k")
    assert isinstance(error, UnknownColumnError)
    assert "ambiguous column 'k': tables dims, facts all have it; qualify it, e.g. dims.k" \
        in str(error)


@pytest.mark.parametrize("query, construct", [
    ("SELECT g, SUM(v) FROM facts GROUP BY ROLLUP(g)", "ROLLUP, CUBE and GROUPING SETS"),
    ("SELECT s FROM facts WHERE k = 1 OR EXISTS (SELECT 1 FROM dims WHERE dims.k = facts.k)",
     "EXISTS and IN subqueries are supported only as conditions of WHERE joined by AND"),
    ("SELECT x FROM facts f, LATERAL (SELECT 1 AS x)", "LATERAL in FROM"),
    ("WITH RECURSIVE r AS (SELECT 1 AS n) SELECT n FROM r", "recursive CTEs"),
    ("INSERT INTO facts SELECT * FROM facts", "only queries run here, not INSERT"),
])  # fmt: skip
def test_a_construct_not_supported_yet_is_named(catalog, query, construct):
    error = refused(catalog, query)
    assert isinstance(error, UnsupportedSqlError)
    assert construct in str(error)


def test_a_table_with_no_data_files_names_its_path(tmp_path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    (empty / "_SUCCESS").write_text("")
    error = refused(Catalog.from_tables({"t": str(empty)}), "SELECT * FROM t")
    assert isinstance(error, TableError)
    assert str(empty) in str(error) and "no data files" in str(error)


@pytest.mark.parametrize("query, words", [
    ("SELECT s FROM facts WHERE v", "the WHERE condition `v` is of type decimal(15,2), not a "
                                    "boolean"),
    ("SELECT s FROM facts WHERE k > DATE'2020-01-01'", "incompatible types int and date"),
    ("SELECT s,\n  d * DATE'2020-01-01' FROM facts", "incompatible types double and date"),
    ("SELECT AVG(DATE'2020-01-01') FROM facts", "AVG needs a number"),
])  # fmt: skip
def test_a_type_error_spark_would_raise_at_analysis_names_the_expression(catalog, query, words):
    error = refused(catalog, query)
    assert isinstance(error, SqlTypeError)
    assert words in str(error)
    assert error.line is not None


def test_a_column_neither_grouped_nor_aggregated_is_named(catalog):
    error = refused(catalog, "SELECT s, SUM(v) FROM facts")
    assert "column 's'" in str(error) and "neither grouped nor inside an aggregate" in str(error)
