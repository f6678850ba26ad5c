"""A real job's metrics, scraped from Ray's Prometheus endpoint on the cluster ``Client()``
starts by default, carry the job's id and its exact totals; the cluster's dashboard answers as
``ray job submit`` would find it. The job runs in ``metrics_on_ray.py``, a script with its own
cluster (the tests' shared one starts without the dashboard)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def scraped(tmp_path_factory):
    out = tmp_path_factory.mktemp("metrics") / "sums"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""}
    run = subprocess.run(
        [sys.executable, "-m", "tests.jobmanager.runtime.metrics_on_ray", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["succeeded"], found["cause"]
    assert found["samples"], f"no ray_tidal_* sample {found['seconds_after_end']} s after the end"
    return found


def totals(found: dict, name: str) -> dict[str, float]:
    """Per vertex, summed over the series of every process that counted (``WorkerId``)."""
    per_vertex: dict[str, float] = {}
    for sample in found["samples"]:
        if sample["name"] == name:
            vertex = sample["labels"].get("vertex", "")
            per_vertex[vertex] = per_vertex.get(vertex, 0) + sample["value"]
    return per_vertex


def test_the_task_counters_carry_the_jobs_id_and_its_totals(scraped):
    vertices = {v["name"]: v for v in scraped["vertices"]}
    tasks = {name: v["tasks"] for name, v in vertices.items()}
    assert totals(scraped, "ray_tidal_tasks_deployed_total") == tasks
    assert totals(scraped, "ray_tidal_tasks_finished_total") == tasks
    assert sum(totals(scraped, "ray_tidal_tasks_failed_total").values()) == 0
    assert set(totals(scraped, "ray_tidal_tasks_running").values()) == {0}
    assert {s["labels"]["job_id"] for s in scraped["samples"]} == {scraped["job_id"]}
    assert {s["labels"]["job_name"] for s in scraped["samples"]} == {"sums"}


def test_bytes_and_parallelism_are_what_the_jobs_status_says(scraped):
    vertices = scraped["vertices"]
    written = totals(scraped, "ray_tidal_bytes_written_total")
    read = totals(scraped, "ray_tidal_bytes_read_total")
    assert {v["name"]: written.get(v["name"], 0) for v in vertices} == {
        v["name"]: v["bytes_out"] for v in vertices
    }
    assert {v["name"]: read.get(v["name"], 0) for v in vertices} == {
        v["name"]: v["bytes_in"] for v in vertices
    }
    assert written["numbers"] > 0 and read["sum -> sink"] > 0  # sum and sink: one chained task
    assert totals(scraped, "ray_tidal_vertex_parallelism") == {
        v["name"]: v["parallelism"] for v in vertices
    }


def test_the_jobmanagers_loop_and_event_log_are_measured(scraped):
    batches = totals(scraped, "ray_tidal_jobmanager_loop_seconds_count")[""]
    events = totals(scraped, "ray_tidal_jobmanager_events_total")[""]
    tasks = sum(v["tasks"] for v in scraped["vertices"])
    assert 1 <= batches <= events and events >= 2 * tasks  # each task: running, then finished
    assert totals(scraped, "ray_tidal_event_log_bytes")[""] == scraped["log_bytes"]


def test_the_clusters_dashboard_answers_as_ray_job_submit_finds_it(scraped):
    assert scraped["dashboard_job_api"]
