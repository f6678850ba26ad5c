"""Many jobs on one session cluster: a job waiting for slots gets the TaskManagers another job
gives back at once, not after ``resourcemanager.taskmanager-timeout``."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[3]


def test_two_jobs_submitted_together_on_two_cpus_take_no_longer_than_one_after_the_other(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""}
    run = subprocess.run(
        [sys.executable, "-m", "tests.jobmanager.runtime.two_jobs", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    times = json.loads(run.stdout.strip().splitlines()[-1])
    solo_a, solo_b = times["solo"]
    assert max(times["together"]) <= solo_a + solo_b + 3, times
    # a job of another shape: the idle TaskManagers are stopped for it, a new one starts
    assert max(times["other_shape"]) <= solo_a + solo_b + 10, times
