import json
import subprocess
import sys

import pytest

from jobmanager.simulation.stress import PHASES, run_stress


@pytest.mark.parametrize("pattern", ["all-to-all", "pointwise"])
@pytest.mark.parametrize("result", ["blocking", "pipelined"])
def test_stress_run_finishes_and_reports_every_phase(pattern, result):
    report = run_stress(200, pattern, result, vertices=3, slots_per_task_manager=16)
    assert report.status == "FINISHED"
    assert report.tasks == 600
    assert list(report.phases) == list(PHASES)
    assert all(f["seconds"] >= 0 and f["peak_bytes"] > 0 for f in report.phases.values())
    assert report.execution_graph_retained_bytes > 0
    expected_regions = {"blocking": 600, "pipelined": 1 if pattern == "all-to-all" else 200}
    assert report.regions == expected_regions[result]


def test_tidal_stress_json_prints_exactly_the_documented_keys():
    out = subprocess.run(
        [sys.executable, "-m", "jobmanager", "stress", "--parallelism", "100", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert set(figures) == {
        "status",
        "phases",
        "execution_graph_retained_bytes",
        "tasks",
        "regions",
    }
    assert figures["status"] == "FINISHED"
    assert set(figures["phases"]) == set(PHASES)
    for phase in figures["phases"].values():
        assert set(phase) == {"seconds", "peak_bytes"}
    assert figures["tasks"] == 200 and figures["regions"] == 200


def test_tidal_stress_refuses_bad_options():
    done = subprocess.run(
        [sys.executable, "-m", "jobmanager", "stress", "--pattern", "sideways"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "sideways" in done.stderr


def test_adaptive_stress_decides_the_consumer_from_simulated_bytes():
    report = run_stress(300, "all-to-all", "blocking", adaptive=True)
    assert report.status == "FINISHED" and report.tasks == 600
    assert report.parallelisms == {"v0": 300, "v1": 300}
    assert "per task" in report.decisions["v1"]


def test_tidal_stress_exits_non_zero_when_the_job_did_not_finish(monkeypatch):
    from typer.testing import CliRunner

    import jobmanager.simulation.stress as stress
    from jobmanager.client.cli import app

    def failing(*args, **kwargs):
        report = run_stress(20)
        report.status = "FAILED"
        return report

    monkeypatch.setattr(stress, "run_stress", failing)
    # the runner's stderr is closed after it: logging must not be pointed at it
    monkeypatch.setattr("jobmanager.client.cli.configure_logging", lambda *a, **k: None)
    done = CliRunner().invoke(app, ["stress", "--parallelism", "20", "--json"])
    assert done.exit_code == 1
    assert json.loads(done.output.strip().splitlines()[-1])["status"] == "FAILED"
