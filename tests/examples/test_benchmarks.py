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
def test_tpch_baseline_runs_and_checks_itself_at_a_tiny_size(tmp_path_factory, tmp_path,
                                                             shared_session, capsys):
    data = tmp_path_factory.mktemp("tpch-dbgen")
    summary = load("tpch").main(["--scale", "0.01", "--data", str(data), "--warmups", "0",
                                 "--repeats", "1", "--queries", "1", "6", "--baseline-only",
                                 "--dir", str(tmp_path), "--cold-queries", "6"])  # fmt: skip
    assert _last_line_json(capsys) == summary
    assert summary["same_result"] is True  # PySpark's written answers against DuckDB's
    assert set(summary["queries"]) == {"q01", "q06"}
    for figures in summary["queries"].values():
        assert figures["spark_seconds"] > 0
        assert figures["tidal_seconds"] is None and figures["ratio"] is None
    assert (summary["queries"]["q01"]["rows"], summary["queries"]["q06"]["rows"]) == (4, 1)
    assert summary["ratio"] is None and summary["target_ratio"] == 1.0
    cold = summary["queries"]["q06"]  # its first run in a process and a JVM of its own
    assert cold["cold_spark_start_seconds"] > 0 and cold["cold_spark_first_seconds"] > 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spark
def test_tpch_benchmark_reports_a_wrong_answer(tmp_path_factory, shared_session, monkeypatch,
                                               capsys):
    tpch = load("tpch")
    monkeypatch.setattr(tpch, "duckdb_answer", lambda data, text: pa.table({"revenue": [1.0]}))
    summary = tpch.main(["--scale", "0.01", "--data", str(tmp_path_factory.mktemp("tpch-dbgen")),
                         "--warmups", "0", "--repeats", "1", "--queries", "6",
                         "--baseline-only"])  # fmt: skip
    assert summary["same_result"] is False
    assert ("q06: result differs from DuckDB's answer: row 0 (both sorted by all columns), "
            "column 0 ('revenue'): Decimal('1193053.2253'), expected 1.0"
            in capsys.readouterr().out)


def test_tpch_ratio_is_the_geometric_mean_of_the_queries():
    tpch = load("tpch")
    assert tpch.geometric_mean([0.5, 2.0]) == pytest.approx(1.0)
    assert tpch.geometric_mean([0.9, 0.9, 0.9]) == pytest.approx(0.9)
    assert tpch.query_name(6) == "q06"


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
