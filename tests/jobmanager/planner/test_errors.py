"""Each mistake in a query is refused while planning, in Tidal's words, saying where.
(That nothing runs: ``tests/jobmanager/client/test_client_sql.py`` submits them.)"""

from __future__ import annotations

import pytest

from jobmanager.errors import (
    PlannerBug,
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
    assert "ambiguous column 'k': tables dims, facts all have it; qualify it, e.g. dims.k" in str(
        error
    )


@pytest.mark.parametrize(
    "query, reason",
    [
        ("SELECT x FROM facts f, LATERAL (SELECT f.k + 1 AS x)", "LATERAL in FROM"),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
            "SELECT n FROM r",
            "recursive CTEs",
        ),
    ],
)
def test_what_the_planner_does_not_cut_runs_whole_and_explain_says_why(catalog, query, reason):
    planned = plan_sql(query, catalog, ParquetSink("/tmp/tidal-planner-errors-out"))
    (whole,) = [v for v in planned.graph.vertices if v.name.startswith("whole")]
    assert whole.parallelism == 1
    assert "run whole by Spark" in planned.explain() and reason in planned.explain()


def test_a_planner_failure_reads_as_a_bug_in_tidal_without_its_made_up_names(catalog, monkeypatch):
    """A failure inside the planner (here planted in its column pruning) is the planner's:
    it says so, names the query it was planning, and shows none of its own column ids."""
    from jobmanager.planner.rules import logical_rules

    def broken(node, trim=True):
        raise KeyError("_c3")

    monkeypatch.setattr(logical_rules, "prune_columns", broken)
    query = "SELECT g, sum(v) AS total FROM facts GROUP BY g"
    with pytest.raises(PlannerBug) as caught:
        plan_sql(query, catalog, ParquetSink("/tmp/tidal-planner-errors-out"))
    message = str(caught.value)
    assert message.startswith("bug in Tidal: its planner failed while optimizing the query")
    assert query in message and "_c3" not in message
    assert not isinstance(caught.value, SqlError)


def test_a_column_the_planner_lost_is_its_bug_not_an_unknown_column(catalog, monkeypatch):
    """An unknown-column error naming a column the user never wrote is the planner's."""
    import jobmanager.planner as planner

    def lost(*args, **kwargs):
        raise UnknownColumnError("unknown column '_col_3'; did you mean 'g'?")

    monkeypatch.setattr(planner, "cut_into_stages", lost)
    with pytest.raises(PlannerBug, match="while cutting into stages") as caught:
        plan_sql("SELECT g FROM facts", catalog, ParquetSink("/tmp/tidal-planner-errors-out"))
    assert "_col_3" not in str(caught.value)


def test_a_statement_that_is_no_query_is_refused(catalog):
    error = refused(catalog, "INSERT INTO facts SELECT * FROM facts")
    assert isinstance(error, UnsupportedSqlError)
    assert "only queries run here, not INSERT" in str(error)


def test_a_table_with_no_data_files_names_its_path(tmp_path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    (empty / "_SUCCESS").write_text("")
    error = refused(Catalog.from_tables({"t": str(empty)}), "SELECT * FROM t")
    assert isinstance(error, TableError)
    assert str(empty) in str(error) and "no data files" in str(error)


@pytest.mark.parametrize(
    "query, words",
    [
        (
            "SELECT s FROM facts WHERE v",
            "the WHERE condition `v` is of type decimal(15,2), not a boolean",
        ),
        ("SELECT s FROM facts WHERE k > DATE'2020-01-01'", "incompatible types int and date"),
        ("SELECT s,\n  d * DATE'2020-01-01' FROM facts", "incompatible types double and date"),
        ("SELECT AVG(DATE'2020-01-01') FROM facts", "AVG needs a number"),
    ],
)
def test_a_type_error_spark_would_raise_at_analysis_names_the_expression(catalog, query, words):
    error = refused(catalog, query)
    assert isinstance(error, SqlTypeError)
    assert words in str(error)
    assert error.line is not None


def test_a_column_neither_grouped_nor_aggregated_is_named(catalog):
    error = refused(catalog, "SELECT s, SUM(v) FROM facts")
    assert "column 's'" in str(error) and "neither grouped nor inside an aggregate" in str(error)
