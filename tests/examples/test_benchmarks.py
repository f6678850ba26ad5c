"""The two benchmark scripts: their path guard, the no-op job's shape, and their PySpark halves
at a tiny size, so the scripts never rot (their full sizes are scale 1 and N = 1000)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pytest

from jobmanager import Partitioner, ResultPartitionType
from jobmanager.model.jobgraph import DistributionPattern
from jobmanager.model.operators import ArrowFunction, check_operators

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"


def load(name: str):
    """A benchmark script as a module (it is not a package)."""
    spec = importlib.util.spec_from_file_location(f"tidal_benchmark_{name}",
                                                  BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _guard(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("_ROOT = "))
    return lines[start:start + 3]


@pytest.mark.parametrize("script", ["tpch.py", "tpch_shape.py", "noop_scale.py", "recovery.py"])
def test_each_script_starts_with_the_path_guard_of_shuffle_py(script):
    guard = _guard(BENCHMARKS / "shuffle.py")
    assert guard[-1].strip() == "sys.path[0] = str(_ROOT)"
    assert _guard(BENCHMARKS / script) == guard
    source = (BENCHMARKS / script).read_text()
    assert source.index("sys.path[0] = str(_ROOT)") < source.index("import argparse")


def test_the_noop_job_is_n_by_n_all_to_all_blocking():
    noop = load("noop_scale")
    graph = noop.noop_graph(7)
    graph.validate()
    check_operators(graph)
    source, target = graph.vertices
    assert (source.name, source.parallelism, target.name, target.parallelism) == (
        "source", 7, "noop", 7)
    (edge,) = graph.edges
    assert edge.partitioner == Partitioner.REBALANCE
    assert edge.result_type is ResultPartitionType.BLOCKING
    assert edge.distribution_pattern is DistributionPattern.ALL_TO_ALL
    assert isinstance(source.operator, ArrowFunction) and not source.sources
    table = source.operator.fn()
    assert isinstance(table, pa.Table) and table.num_rows == 1
    assert target.operator.fn(table) is table


def _last_line_json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.fixture
def shared_session(spark_session, monkeypatch):
    """The scripts build their session with ``getOrCreate``, so they get the tests' one; they
    must not stop it, and the SQL options they set are put back."""
    monkeypatch.setattr(spark_session, "stop", lambda: None)
    adaptive = spark_session.conf.get("spark.sql.adaptive.enabled")
    yield spark_session
    spark_session.conf.set("spark.sql.adaptive.enabled", adaptive)


@pytest.mark.spark
def test_noop_baseline_runs_n_by_n_tasks_at_a_tiny_size(shared_session, capsys):
    summary = load("noop_scale").main(
        ["--n", "8", "--warmups", "0", "--repeats", "1", "--baseline-only"])
    assert _last_line_json(capsys) == summary
    assert summary["n"] == 8 and summary["tasks"] == 16
    assert summary["spark_seconds"] > 0
    assert summary["tidal_seconds"] is None and summary["ratio"] is None


@pytest.mark.spark
def test_tpch_baseline_runs_and_checks_itself_at_a_tiny_size(tiny_data, tmp_path,
                                                             shared_session, capsys):
    summary = load("tpch").main(["--scale", "0.002", "--data", str(tiny_data), "--warmups", "0", "--repeats", "1",
                                 "--baseline-only", "--dir", str(tmp_path)])
    assert _last_line_json(capsys) == summary
    assert summary["same_result"] is True
    for query in ("q1", "q3"):
        assert summary[f"{query}_spark_seconds"] > 0
        assert summary[f"{query}_tidal_seconds"] is None
    assert summary["q3_spark_job_plan_seconds"] > 0  # checked against the baseline's result
    assert summary["ratio"] is None and summary["target_ratio"] == 1.0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spark
def test_tpch_shape_runs_q1_as_tidal_runs_it_at_a_tiny_size(tiny_data, shared_session, capsys):
    summary = load("tpch_shape").main(["--scale", "0.002", "--data", str(tiny_data),
                                       "--warmups", "0", "--repeats", "1"])  # fmt: skip
    assert _last_line_json(capsys) == summary
    assert summary["same_result"] is True and summary["source_tasks"] >= 1
    assert summary["chained"] is (summary["source_tasks"] == 1)  # tiny data: one task, chained
    assert summary["split_seconds"] > 0 and summary["single_query_seconds"] > 0
    assert summary["ratio"] == pytest.approx(
        summary["split_seconds"] / summary["single_query_seconds"], rel=0.01)
    assert shared_session.conf.get("spark.sql.adaptive.enabled") == "true"  # its own session


def test_the_scripts_explain_themselves():
    for name in ("tpch", "tpch_shape", "noop_scale", "recovery"):
        with pytest.raises(SystemExit) as stopped:
            load(name).main(["--help"])
        assert stopped.value.code == 0


@pytest.mark.runtime
@pytest.mark.spark
def test_recovery_benchmark_kills_a_jobmanager_and_loses_no_finished_task_at_a_tiny_size(
        tiny_data, ray_cluster, capsys):  # fmt: skip
    summary = load("recovery").main(["--scale", "0.002", "--data", str(tiny_data), "--warmups",
                                     "0", "--repeats", "1", "--no-baseline"])  # fmt: skip
    assert _last_line_json(capsys) == summary
    assert summary["same_result"] is True
    assert summary["finished_tasks_rerun"] == 0
    assert 0 < summary["recovery_seconds"] < summary["crashed_seconds"]
    assert summary["ratio"] > 0 and summary["baseline_ratio"] is None


@pytest.mark.runtime
def test_speculation_benchmark_runs_at_a_tiny_size(ray_cluster, capsys):
    summary = load("speculation").main(["--task-seconds", "0.05", "--repeats", "1"])
    assert summary["same_result"] is True and summary["ratio"] > 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == summary
