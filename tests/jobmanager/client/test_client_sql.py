"""``Client.sql`` end to end with the real planner, on a real local Ray cluster with real
PySpark: the result comes back under the query's column names, or goes to ``output``; a query
the planner refuses raises before any job is submitted; explain shows each vertex's SQL;
a small table's GROUP BY runs its final aggregate in its scan's one task."""

from __future__ import annotations

import pytest

from jobmanager import Client
from jobmanager.errors import (
    NoResultError,
    SqlError,
    SqlSyntaxError,
    SqlTypeError,
    TableError,
    UnknownColumnError,
    UnknownTableError,
    UnsupportedSqlError,
)
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS
from tests.jobmanager.runtime.jobs import FAST
from tests.jobmanager.runtime.sql_jobs import (
    expected_aggregate,
    expected_join,
    lines_table,
    write_tables,
)

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {**FAST, NUMBER_OF_TASK_SLOTS.key: 2}


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("sql-tables"))


def test_a_query_result_comes_back_under_the_querys_column_names(client, tables):
    handle = client.sql(
        "SELECT l_key AS k, SUM(l_value) AS total, l_key AS k FROM lines "
        "WHERE l_flag = 'A' GROUP BY l_key ORDER BY l_key",
        tables=tables,
        config=CONFIG,
    )
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    table = result.to_arrow()
    assert table.column_names == ["k", "total", "k"]  # two columns may share a name
    expected = sorted(expected_aggregate().items())
    assert list(zip(table.column(0).to_pylist(), table.column(1).to_pylist())) == expected
    assert "from the query: " in handle.explain()
    # a small table: its scan is one task, and both halves of the aggregate and the sort of
    # its groups (a stage of its own: the SELECT names l_key twice) run in that task
    chain = result.vertices["aggregate l_key"].chain
    assert chain == "scan lines -> partial aggregate -> aggregate l_key -> sort -> result", chain
    assert {v.tasks for v in result.vertices.values()} == {1}
    handle.release()


def test_a_query_part_the_planner_does_not_cut_runs_whole_over_the_tables(client, tables):
    """A recursive CTE (which the planner does not cut) runs as Spark SQL in one task that
    reads the table itself; explain names it and says why."""
    handle = client.sql(
        "WITH RECURSIVE r(n) AS (SELECT min(l_key) FROM lines UNION ALL "
        "SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r ORDER BY n",
        tables=tables,
        config=CONFIG,
    )
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    low = min(lines_table().column("l_key").to_pylist())
    assert result.to_arrow().column(0).to_pylist() == list(range(low, 4))
    assert "run whole by Spark: line 1" in handle.explain()
    assert "recursive CTEs are not supported" in handle.explain()
    handle.release()


def test_a_join_written_to_output_says_where_it_went(client, tables, tmp_path):
    out = str(tmp_path / "joined")
    handle = client.sql(
        "SELECT n_name, SUM(l_value) AS total FROM lines JOIN names "
        "ON l_key = n_key WHERE n_key < 4 GROUP BY n_name",
        tables=tables,
        config=CONFIG,
        output=out,
    )
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    from examples.compare import read_result

    table = read_result(out)
    assert dict(zip(table.column(0).to_pylist(), table.column(1).to_pylist())) == expected_join()
    with pytest.raises(NoResultError, match=f"wrote its result to {out}"):
        result.to_arrow()


@pytest.mark.parametrize(
    "query, error, words",
    [
        ("SELECT l_key FROM lines WHERE", SqlSyntaxError, "line 1, column 25: syntax error at"),
        (
            "SELECT l_key FROM lnes",
            UnknownTableError,
            "unknown table 'lnes'; did you mean 'lines'?",
        ),
        ("SELECT no_such_column FROM lines", UnknownColumnError, "unknown column 'no_such_column'"),
        (
            "SELECT l_key FROM lines JOIN lines AS again ON lines.l_key = again.l_key",
            UnknownColumnError,
            "ambiguous column 'l_key'",
        ),
        ("INSERT INTO lines SELECT * FROM lines", UnsupportedSqlError, "only queries run here"),
        ("SELECT l_key FROM lines WHERE l_value", SqlTypeError, "not a boolean"),
        ("SELECT * FROM empty", TableError, "no data files"),
    ],
)
def test_a_query_the_planner_refuses_raises_before_anything_is_submitted(
    client, tables, tmp_path, query, error, words
):
    (tmp_path / "empty").mkdir()
    before = {job.job_id for job in client.list()}
    with pytest.raises(error) as refused:
        client.sql(query, tables={**tables, "empty": str(tmp_path / "empty")}, config=CONFIG)
    assert isinstance(refused.value, SqlError) and words in str(refused.value)
    # nothing was submitted (an earlier test's released job may leave the list meanwhile)
    assert {job.job_id for job in client.list()} <= before
