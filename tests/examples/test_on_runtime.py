"""The example jobs on Tidal's runtime, on a real local Ray cluster with real PySpark: the demo
end to end and from its command line, Q1 and Q3, and both benchmarks at a tiny size. Skipped,
with the reason, while the runtime cannot be imported."""

from __future__ import annotations

import json
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
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_the_demo_command_prints_the_result_and_every_decision(tiny_data, tmp_path):
    done = _script("examples/revenue_by_nation.py", "--scale", str(TINY_SCALE),
                   "--data", str(tiny_data), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "decided parallelism per vertex" in done.stdout
    for name in ("orders", "lineitem", "join_orders_lineitem", "revenue_by_nation", "sink"):
        assert name in done.stdout
    assert reference(tiny_data)["nation"][0].as_py() in done.stdout
    report = done.stdout.strip().splitlines()[-1]
    assert report.startswith("report written to ") and report.endswith(")")
    path = Path(report.removeprefix("report written to ").split(" (or: ")[0])
    assert path.read_text().startswith("<!DOCTYPE html>")


def test_the_tpch_benchmark_runs_at_a_tiny_size(tmp_path_factory, tmp_path):
    data = tmp_path_factory.mktemp("tpch-dbgen")
    done = _script("benchmarks/tpch.py", "--scale", "0.01", "--data", str(data),
                   "--warmups", "0", "--repeats", "1", "--queries", "3", "6",
                   "--join-strategy", "runtime_only", "none",
                   "--dir", str(tmp_path))  # the cold figure: test_benchmarks.py's baseline
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["same_result"] is True and figures["ratio"] > 0
    q03, q06 = figures["queries"]["q03"], figures["queries"]["q06"]
    assert figures["ratio"] == pytest.approx((q03["ratio"] * q06["ratio"]) ** 0.5, rel=0.01)
    assert figures["ratios"] == {"q03": q03["ratio"], "q06": q06["ratio"]}
    assert set(figures["ratio_by_strategy"]) == {"runtime_only", "none"}
    assert figures["ratio_by_strategy"]["runtime_only"] == figures["ratio"]
    decided = {strategy: q03["by_strategy"][strategy]["joins"] for strategy in ("runtime_only", "none")}
    assert len(decided["runtime_only"]) == 2 and decided["none"] == [], decided  # q03 joins 3 tables
    assert all(p >= 1 for p in q03["parallelism"].values())
    assert "slowest against PySpark" in done.stdout


def test_the_noop_benchmark_runs_at_a_tiny_size():
    done = _script("benchmarks/noop_scale.py", "--n", "10", "--warmups", "0", "--repeats", "1",
                   "--pyspark-vertices")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["tasks"] == 20 and figures["ratio"] > 0
    assert figures["pyspark_vertices_ratio"] > 0  # the same job with a Spark query per task


def test_the_noop_benchmark_measures_growth_at_tiny_sizes():
    done = _script("benchmarks/noop_scale.py", "--sizes", "5,10", "--warmups", "0", "--repeats", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(figures["seconds_per_task"]) == {"5", "10"}
    per_task = figures["seconds_per_task"]
    assert abs(figures["ratio"] - per_task["10"] / per_task["5"]) < 0.01
