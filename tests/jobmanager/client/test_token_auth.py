"""Ray's token authentication, on by default in the Ray Tidal installs: a cluster started with
``ray start --head`` is joined by ``Client(address=...)`` and by a job under ``ray job submit``
when the token is where Ray looks for it, and refused at once, in one line saying what to set,
when it is not (``token_cluster.py`` does the work in a PID namespace of its own)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[3]


def test_a_token_cluster_is_joined_with_the_token_and_refused_at_once_without(tmp_path):
    ray_tmp = tempfile.mkdtemp(prefix="tidal-ray-")  # short: Ray's socket paths fit 107 bytes
    try:
        done = subprocess.run(
            [
                "unshare",
                "--pid",
                "--fork",
                "--mount-proc",
                "--kill-child",
                sys.executable,
                "-m",
                "tests.jobmanager.client.token_cluster",
                str(tmp_path),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=480,
            env={**os.environ, "RAY_TMPDIR": ray_tmp},
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    client = report["client"]
    assert "STATUS FINISHED" in client["out"], client["err"]
    assert "Token authentication" not in client["err"]
    submitted = report["ray_job_submit"]
    assert submitted["code"] == 0 and "STATUS FINISHED" in submitted["out"], submitted
    refused = report["without_token"]
    # at once: refused by the client's one question to the cluster before ray.init (which
    # would try again and again), as the line that question's answer makes says
    assert refused["code"] == 2, refused
    (line,) = [l for l in refused["err"].splitlines() if l.startswith("error: ")]
    assert "uses Ray's token authentication" in line and "~/.ray/auth_token" in line
    assert "RAY_AUTH_TOKEN" in line
