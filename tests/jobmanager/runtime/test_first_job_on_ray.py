"""A cluster the client starts prepares its first job's TaskManager, Spark JVM and all, before
the job arrives (``Client`` on a new cluster, ``ResourceManager.prepare_task_manager``): the
job's tasks run on it, and no other TaskManager is started."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pathlib import Path

pytestmark = pytest.mark.runtime
REPO = Path(__file__).resolve().parents[3]


def test_the_first_jobs_task_manager_has_its_jvm_up_before_the_job_arrives(tmp_path):
    data, out = tmp_path / "t", tmp_path / "out"
    data.mkdir()
    pq.write_table(pa.table({"k": [1, 2, 1, 3], "v": [10, 20, 30, 40]}), data / "part-0.parquet")
    done = subprocess.run([sys.executable, "-m", "tests.jobmanager.runtime.first_job", str(data),
                           str(out)], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "RAY_ADDRESS": ""})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["status"] == "FINISHED", facts["cause"]
    assert len(facts["prepared"]) == 1  # its JVM was up before the job was submitted
    assert facts["ran_on"] == facts["prepared"] and facts["created"] == 1
    assert sorted(pq.read_table(out).to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "s": 40}, {"k": 2, "s": 20}, {"k": 3, "s": 40}]
