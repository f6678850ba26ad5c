"""A cluster the client starts prepares its first job's TaskManager, Spark JVM and all, and its
JobManager, before the job arrives (``Client`` on a new cluster, ``jobmanager.runtime.firstjob``):
the job's tasks run on that TaskManager, no other TaskManager is started, and the job runs on
the standby JobManager with no second one beside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager.runtime.names import job_manager_name

pytestmark = pytest.mark.runtime
REPO = Path(__file__).resolve().parents[3]


def first_job(tmp_path, *mode: str) -> dict:
    """Run ``first_job`` in a process of its own; its facts, once the job finished."""
    data, out = tmp_path / "t", tmp_path / "out"
    data.mkdir()
    pq.write_table(pa.table({"k": [1, 2, 1, 3], "v": [10, 20, 30, 40]}), data / "part-0.parquet")
    done = subprocess.run(
        [sys.executable, "-m", "tests.jobmanager.runtime.first_job", str(data), str(out), *mode],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "RAY_ADDRESS": ""},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["status"] == "FINISHED", facts["cause"]
    assert sorted(pq.read_table(out).to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "s": 40},
        {"k": 2, "s": 20},
        {"k": 3, "s": 40},
    ]
    return facts


def test_a_warmed_up_client_has_the_first_jobs_task_manager_jvm_up(tmp_path):
    """``Client.warm_up`` returns once the prepared TaskManager's JVM is up, as a
    SparkSession's start returns once its JVM is: the job finds it up, not starting."""
    facts = first_job(tmp_path)
    assert not facts["dashboard_process"]  # dashboard=False: Ray would start one all the same
    assert len(facts["prepared"]) == 1  # its JVM was up once warm_up returned
    assert facts["ran_on"] == facts["prepared"] and facts["created"] == 1


def test_a_job_submitted_as_the_cluster_starts_runs_on_the_prepared_standby_alone(tmp_path):
    """The client's claim waits for the standby it asked for: claimed first, it would find
    none, and a second JobManager would start beside the standby."""
    facts = first_job(tmp_path, "at-once")
    assert facts["job_managers"] == [job_manager_name(facts["job"])]
