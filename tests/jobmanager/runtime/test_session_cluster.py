"""Many jobs on one session cluster: a job waiting for slots gets the TaskManagers another job
gives back at once, not after ``resourcemanager.taskmanager-timeout``: with that timeout at ten
minutes, both jobs finish within their wait (before the leasing fix, the second job waited for
the idle TaskManagers' timeout). Facts from the jobs' event logs: which TaskManagers each ran on."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[3]


def test_two_jobs_submitted_together_on_two_cpus_share_the_taskmanagers_given_back(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""}
    run = subprocess.run(
        [sys.executable, "-m", "tests.jobmanager.runtime.two_jobs", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    ran = json.loads(run.stdout.strip().splitlines()[-1])
    a, b = ran["together"]
    assert (a["status"], b["status"]) == ("FINISHED", "FINISHED"), ran
    # two CPUs: two one-slot TaskManagers in all, the second job's given back by the first or
    # shared from the start
    assert len(a["task_managers"].keys() | b["task_managers"].keys()) <= 2, ran
    assert set(a["task_managers"].values()) == set(b["task_managers"].values()) == {1}, ran

    # a job of another shape: the idle one-slot TaskManagers are stopped for it (not kept for
    # their ten minutes), and a new two-slot one starts
    c, d = ran["other_shape"]
    assert (c["status"], d["status"]) == ("FINISHED", "FINISHED"), ran
    assert set(c["task_managers"].values()) == {1} and set(d["task_managers"].values()) == {2}, ran
    earlier = a["task_managers"].keys() | b["task_managers"].keys() | c["task_managers"].keys()
    assert not d["task_managers"].keys() & earlier, ran
