"""The example jobs on Tidal's runtime, on a real local Ray cluster with real PySpark: the
README's demo, the revenue job end to end and from its command line, Q1 and Q3 (the
benchmarks' tiny runs are in ``test_benchmarks.py``). Skipped, with the reason, while the runtime cannot be imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples.compare import first_difference, read_result
from examples.revenue_by_nation import build, reference
from examples.tpch_queries import q1, q3, reference_q1, reference_q3
from tests.examples.conftest import TINY_SCALE

pytestmark = pytest.mark.runtime

REPO = Path(__file__).resolve().parents[2]


def _run(graph):
    from jobmanager import Client

    result = Client().submit(graph).wait()
    assert result.status == "FINISHED", result.cause
    return result


def test_the_demo_equals_its_reference_row_by_row(ray_cluster, tiny_data, tmp_path):
    result = _run(build(tiny_data, tmp_path / "out"))
    assert first_difference(read_result(tmp_path / "out"), reference(tiny_data)) is None
    assert set(result.vertices) == {v.name for v in build(tiny_data, tmp_path).vertices}
    for name, vertex in result.vertices.items():
        assert vertex.parallelism >= 1 and vertex.explanation, name
    assert result.vertices["revenue_by_nation"].parallelism == 1


@pytest.mark.parametrize("query, expected", [(q1, reference_q1), (q3, reference_q3)])
def test_tpch_queries_equal_their_references(ray_cluster, tiny_data, tmp_path, query, expected):
    _run(query(tiny_data, tmp_path / "out"))
    assert first_difference(read_result(tmp_path / "out"), expected(tiny_data)) is None


def _script(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """``python *args`` as a user runs it: on a local cluster of its own."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, "RAY_ADDRESS": ""},
    )


def test_the_demo_command_prints_the_result_and_every_decision(tiny_data, tmp_path):
    """As a new user runs it: on a cluster of its own, whose prepared TaskManager starts its
    JVM while the demo's first tasks arrive (their code imports pyspark.sql.functions as that
    JVM's thread imports pyspark.sql: a half-initialised module once failed the demo)."""
    done = _script(
        "examples/revenue_by_nation.py",
        "--scale",
        str(TINY_SCALE),
        "--data",
        str(tiny_data),
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "decided parallelism per vertex" in done.stdout
    for name in ("orders", "lineitem", "join_orders_lineitem", "revenue_by_nation", "sink"):
        assert name in done.stdout
    assert reference(tiny_data)["nation"][0].as_py() in done.stdout
    report = done.stdout.strip().splitlines()[-1]
    assert report.startswith("report written to ") and report.endswith(")")
    path = Path(report.removeprefix("report written to ").split(" (or: ")[0])
    assert path.read_text().startswith("<!DOCTYPE html>")


def test_the_readme_demo_runs_its_script_and_query_and_prints_each_decision(tiny_data):
    """``examples/demo.py``, the README's first command, on a cluster it starts in its process:
    the README's PySpark script through ``tidal run``'s machinery, then the SQL query."""
    done = _script("examples/demo.py", "--scale", str(TINY_SCALE), "--data", str(tiny_data))
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout
    assert "$ tidal run examples/pipeline.py" in printed
    assert "|o_orderpriority|" in printed  # the script's show()
    assert "decisions of pipeline.py:14 show" in printed
    assert "decisions of pipeline.py:15 write.parquet" in printed
    assert "decisions of sql" in printed and "joins:" in printed
    assert ": parallelism " in printed
    assert reference(tiny_data)["nation"][0].as_py() in printed
