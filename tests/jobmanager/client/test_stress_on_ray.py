"""``tidal stress --on-ray`` on the tests' local Ray cluster: at a tiny size it runs the N x N
job for real and reports the figures the simulated mode does where they apply, and those only
a real run has; Ctrl-C cancels the job and the command says so."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobmanager.client.stress_on_ray import ON_RAY_PHASES
from jobmanager.messages.jobstatus import JobStatus

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[3]


def tidal(*args: str) -> subprocess.Popen:
    # SIGINT as a terminal would deliver it, even where this process was started ignoring it
    return subprocess.Popen(
        [sys.executable, "-m", "jobmanager", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_a_tiny_stress_run_on_ray_reports_its_figures(ray_cluster):
    run = tidal("stress", "--on-ray", "--parallelism", "20", "--json")
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err[-3000:]
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["status"] == "FINISHED" and figures["tasks"] == 40
    assert list(figures["phases"]) == list(ON_RAY_PHASES)
    assert all(phase["seconds"] >= 0 for phase in figures["phases"].values())
    assert figures["subpartition_reads"] == 20  # each consumer reads the one producer with its row
    loop = figures["jobmanager_loop"]
    assert loop["batches"] > 0 and 0 < loop["median_ms"] <= loop["p99_ms"]
    assert figures["jobmanager_peak_rss_bytes"] > 50 << 20
    assert figures["taskmanager_peak_rss_bytes"] > 50 << 20
    assert figures["tasks_per_second"] > 0 and figures["vertices"] == {"v0": 20, "v1": 20}


def test_ctrl_c_cancels_the_stress_job(ray_cluster):
    from jobmanager import Client

    run = tidal("stress", "--on-ray", "--parallelism", "20000")
    line = run.stderr.readline()
    while "submitted" not in line:
        assert line, "the command ended before submitting"
        line = run.stderr.readline()
    job_id = line.split()[2]
    handle = Client().job(job_id)
    deadline = time.monotonic() + 120
    while not any(v.finished for v in handle.status().vertices):
        assert time.monotonic() < deadline, "no task finished"
        time.sleep(0.1)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=180)
    assert run.returncode == 130, err[-3000:]
    assert f"job {job_id}: CANCELED" in err
    assert handle.status().status is JobStatus.CANCELED
