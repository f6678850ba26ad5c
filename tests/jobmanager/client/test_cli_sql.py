"""``tidal sql`` as a user runs it: real processes, the real planner, a real cluster.

A mistake (no query or two, an unreadable query file, a bad ``--table`` pair, a bad option, a
query or catalogue the planner refuses, an output that exists) is one line on stderr, exit code
2, before any cluster is touched (``RAY_ADDRESS`` names a port nobody listens on);
``--explain`` plans without a cluster. A run prints the rows, capped by ``--max-rows``, or
where ``-o`` wrote them, and ``tidal explain`` then shows the SQL each vertex ran."""

from __future__ import annotations

import re

import pytest

from tests.jobmanager.client.test_cli import FAST, tidal, write
from tests.jobmanager.runtime.sql_jobs import expected_aggregate, write_tables

NO_CLUSTER = {"RAY_ADDRESS": "127.0.0.1:1"}
QUERY = (
    "SELECT l_key AS key, SUM(l_value) AS total FROM lines WHERE l_flag = 'A' "
    "GROUP BY l_key ORDER BY l_key"
)


@pytest.fixture
def here(tmp_path):
    """A folder with the tables (``lines``, ``names``), a catalogue of them, a query file."""
    write_tables(tmp_path)
    write(tmp_path / "catalog.yaml", "tables:\n  lines: lines\n  names: names\n")
    write(tmp_path / "query.sql", QUERY + "\n")
    (tmp_path / "existing").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    "args, expected",
    [
        ([], "error: give the query, or -f FILE holding it (one of the two)"),
        (
            ["SELECT 1", "-f", "query.sql"],
            "error: give the query, or -f FILE holding it (one of the two)",
        ),
        (["-f", "nope.sql"], "error: nope.sql: cannot read the query: No such file or directory"),
        (["SELECT 1", "--table", "lines"], "error: --table lines: expected name=path"),
        (
            ["SELECT 1", "-D", "parallelism.default=0"],
            "error: configuration option 'parallelism.default': bad value '0': must be at least 1, got 0",
        ),
        (["SELECT 1", "--config", "nope.yaml"], "error: nope.yaml: no such configuration file"),
        (
            [QUERY, "--table", "lines=lines", "-o", "existing"],
            "error: output {here}/existing exists already: replace it with overwrite=True "
            "(tidal sql --overwrite)",
        ),
    ],
)
def test_each_mistake_is_one_line_with_exit_code_2_and_no_cluster(here, args, expected):
    done = tidal("sql", *args, cwd=here, env=NO_CLUSTER, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [expected.format(here=here)] and done.stdout == ""


@pytest.mark.parametrize(
    "args, mentions",
    [
        (["SELEC l_key FROM lines", "--table", "lines=lines"], "syntax error"),
        (["SELECT * FROM nope", "--table", "lines=lines"], "nope"),
        (["SELECT no_such_column FROM lines", "--table", "lines=lines"], "no_such_column"),
        (["SELECT * FROM lines", "--catalog", "nope.yaml"], "nope.yaml"),
    ],
)
def test_a_query_or_catalogue_the_planner_refuses_is_one_line_with_exit_code_2(
    here, args, mentions
):
    done = tidal("sql", *args, cwd=here, env=NO_CLUSTER, timeout=60)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stdout == "", done.stderr
    assert done.stderr.startswith("error: ") and mentions in done.stderr


def test_explain_prints_the_plan_without_a_cluster(here):
    done = tidal(
        "sql",
        "-f",
        "query.sql",
        "--catalog",
        "catalog.yaml",
        "--explain",
        cwd=here,
        env=NO_CLUSTER,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("result columns: key, total\n")
    assert re.search(r"^result\b", done.stdout, re.MULTILINE)  # the last vertex, by name
    assert "from the query: " in done.stdout and re.search(r"^  \| .*SUM\(", done.stdout, re.M)
    # an edge, cut by the keys: the ORDER BY's, as they are the GROUP BY's
    assert re.search(r"^  <- .+: range\(l_key ASC", done.stdout, re.MULTILINE)


@pytest.mark.runtime
def test_a_query_prints_its_rows_and_can_be_explained_after(here, ray_cluster):
    done = tidal(
        "sql",
        QUERY,
        "--table",
        f"lines={here / 'lines'}",
        "--max-rows",
        "3",
        *FAST.split(),
        cwd=here,
    )
    assert done.returncode == 0, done.stderr
    job_id = re.search(r"submitted (\w+)", done.stderr).group(1)
    rows = [
        line.split()
        for line in done.stdout.replace("│", " ").splitlines()
        if re.match(r"^\s*\d+\s+\d+\s*$", line.replace("│", " "))
    ]
    expected = sorted(expected_aggregate().items())
    assert [(int(k), int(t)) for k, t in rows] == expected[:3]
    assert f"{len(expected)} rows, the first 3 shown (--max-rows)" in done.stdout

    explained = tidal("explain", job_id, cwd=here)
    assert explained.returncode == 0, explained.stderr
    assert "from the query: " in explained.stdout and "GROUP BY" in explained.stdout.upper()


@pytest.mark.runtime
def test_a_query_written_with_o_says_where(here, ray_cluster):
    done = tidal(
        "sql", "-f", "query.sql", "--catalog", "catalog.yaml", "-o", "out", *FAST.split(), cwd=here
    )
    assert done.returncode == 0, done.stderr
    assert f"written to {here / 'out'}" in done.stdout
    assert (here / "out" / "_SUCCESS").exists()


def test_explain_rules_shows_what_each_planner_rule_changed_in_a_tpch_query(tmp_path):
    """TPC-H q13 planned without a cluster: every rule named in order, the filter pushed into
    the orders scan and the orders counted before the join shown as lines added."""
    pytest.importorskip("duckdb")
    from examples.tpch_dbgen import generate, queries

    paths = generate(tmp_path / "tpch", 0.01)
    write(tmp_path / "tpch.yaml", "tables:\n" + "".join(f"  {t}: {p}\n" for t, p in paths.items()))
    write(tmp_path / "q13.sql", queries()[13])
    args = ("sql", "-f", "q13.sql", "--catalog", "tpch.yaml", "--explain")
    done = tidal(*args, "--rules", cwd=tmp_path, env=NO_CLUSTER, timeout=120)
    assert done.returncode == 0, done.stderr
    rules, plan = done.stdout.split("result columns: ", 1)
    named = re.findall(r"^\d+\. ([a-z-]+): (\w+)$", rules, re.MULTILINE)
    assert [name for name, _ in named] == [
        "push-filters",
        "prune-columns",
        "reorder-joins",
        "aggregate-before-joins",
        "trim-columns",
        "filter-by-join-keys",
    ]
    assert dict(named)["push-filters"] == "changed"
    assert dict(named)["aggregate-before-joins"] == "changed"
    assert re.search(r"^   \+ .*Scan orders .* where .*special", rules, re.MULTILINE)
    assert re.search(r"^   \+ .*Aggregate by \[o_custkey\]", rules, re.MULTILINE)
    assert "from the query: " in plan  # the plan itself follows
    refused = tidal(*args[:-1], "--rules", cwd=tmp_path, env=NO_CLUSTER, timeout=60)
    assert refused.returncode == 2 and "give --explain too" in refused.stderr
