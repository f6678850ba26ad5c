"""``tidal history``, ``tidal explain`` and ``tidal report`` on a job whose Ray cluster is gone:
the job ran in a process that started its own cluster and exited; the commands read the job's
archive (and store) from files alone."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[4]


def run(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "TIDAL_HOME": str(home),
        "RAY_ADDRESS": "",
        "COLUMNS": "160",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )


def test_a_job_is_explained_reported_and_listed_after_its_cluster_is_gone(tmp_path):
    done = run("-m", "tests.jobmanager.client.report.one_job", str(tmp_path / "out"), home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    job_id = done.stdout.strip().splitlines()[-1]

    listed = run("-m", "jobmanager", "history", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if job_id in line)
    assert re.search(
        r"sums\s*│\s*" + job_id + r"\s*│\s*FINISHED\s*│.*│\s*[\d.]+ s\s*│\s*[0-9]+\s*│", row
    ), row

    explained = run("-m", "jobmanager", "explain", job_id, home=tmp_path)
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0] == f"sums ({job_id}): FINISHED"
    assert "numbers [arrow]: parallelism 3, set by the user (vertex max 3)" in lines
    assert any(
        line.startswith("sum -> sink [chain: arrow -> sink]: parallelism 1, decided at run time")
        for line in lines
    )
    assert (
        "  chained: its vertices run as one task, joined by FORWARD edges, by edges between "
        "two one-task vertices, or by a pre-aggregated edge out of one task "
        "(pipeline.operator-chaining.enabled)"
    ) in lines

    written = run(
        "-m", "jobmanager", "report", job_id, "-o", str(tmp_path / "r.html"), home=tmp_path
    )
    assert written.returncode == 0, written.stderr
    assert (
        written.stdout.strip()
        == f"report of sums ({job_id}, FINISHED) written to {tmp_path / 'r.html'}"
    )
    page = (tmp_path / "r.html").read_text()
    assert (
        page.count('<g class="vertex"') == 2 and page.count('class="attempt outcome-finished"') == 4
    )

    missing = run("-m", "jobmanager", "explain", "0123456789abcdef", home=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith("error: no job '0123456789abcdef' in ")
    assert len(missing.stderr.strip().splitlines()) == 1
