"""The ``tidal`` command as a user runs it: real processes, real job files, a real cluster.

Mistakes in what a user hands to ``tidal run`` are one line naming the file (and the line), exit
code 2, before any cluster is joined; a job file imports the module next to it; a job's status,
listing, logs and cancellation say what happened."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

TIDAL = [sys.executable, "-m", "jobmanager"]
FAST = "-D heartbeat.interval=200ms -D taskmanager.numberOfTaskSlots=1"


def tidal(*args: str, cwd: Path, env: dict | None = None, timeout: float = 180):
    return subprocess.run(
        [*TIDAL, *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def job_files(tmp_path):
    write(
        tmp_path / "jobs" / "helper.py",
        """
        import pyarrow as pa

        def table():
            return pa.table({"key": [1, 2, 3], "value": [10, 20, 30]})
    """,
    )
    write(
        tmp_path / "jobs" / "neighbour.py",
        """
        import helper
        from jobmanager import JobGraph, ParquetSink, Partitioner, arrow

        def build(out, parallelism=1):
            g = JobGraph("neighbour")
            src = g.add_vertex("src", parallelism=parallelism, operator=arrow(lambda: helper.table()))
            sink = g.add_vertex("sink", operator=ParquetSink(out))
            g.connect(src, sink, Partitioner.FORWARD)
            return g
    """,
    )
    write(
        tmp_path / "jobs" / "bad_parallelism.py",
        """
        from jobmanager import JobGraph

        def build():
            g = JobGraph("bad")
            g.add_vertex("src", parallelism=0)
            return g
    """,
    )
    write(
        tmp_path / "jobs" / "raises_on_import.py",
        """
        import helper
        helper.no_such_function()

        def build():
            pass
    """,
    )
    write(tmp_path / "broken.yaml", "parallelism.default: 2\nslots: [1, 2\n")
    return tmp_path


@pytest.mark.parametrize(
    "args, expected",
    [
        (["jobs/missing.py"], "error: jobs/missing.py: no such job file"),
        (
            ["jobs/bad_parallelism.py"],
            "error: jobs/bad_parallelism.py:6: in build(): InvalidParallelismError: vertex 'src': "
            "parallelism must be at least 1, got 0",
        ),
        (
            ["jobs/raises_on_import.py"],
            "error: jobs/raises_on_import.py:3: AttributeError: module 'helper' has no attribute "
            "'no_such_function'",
        ),
        (
            ["jobs/neighbour.py", "-a", "out=x", "--config", "broken.yaml"],
            "error: broken.yaml:3:1: not valid YAML: expected ',' or ']', but got '<stream end>'",
        ),
        (
            ["jobs/neighbour.py", "-a", "out=x", "--config", "nope.yaml"],
            "error: nope.yaml: no such configuration file",
        ),
        (
            ["jobs/neighbour.py", "-a", "out=x", "-a", "into=x"],
            "error: jobs/neighbour.py: build() does not take these arguments: got an unexpected "
            "keyword argument 'into'",
        ),
        (
            ["jobs/neighbour.py", "-a", "out=x", "-D", "parallelism.default=0"],
            "error: configuration option 'parallelism.default': bad value '0': must be at least 1, "
            "got 0",
        ),
    ],
)
def test_each_mistake_at_submit_is_one_line_with_exit_code_2(job_files, args, expected):
    done = tidal("run", *args, cwd=job_files, env={"RAY_ADDRESS": "127.0.0.1:1"}, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [expected] and done.stdout == ""


def test_ctrl_c_in_build_exits_130_as_a_ctrl_c_does_not_2_as_a_mistake(tmp_path):
    write(
        tmp_path / "slow.py",
        """
        def build():
            raise KeyboardInterrupt  # as a Ctrl-C while build() reads something slow
    """,
    )
    done = tidal("run", "slow.py", cwd=tmp_path, env={"RAY_ADDRESS": "127.0.0.1:1"}, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines() == ["interrupted (Ctrl-C) before the job was submitted"]


@pytest.mark.runtime
def test_a_job_file_imports_its_neighbour_and_reports_what_happened(job_files, ray_cluster):
    elsewhere = job_files / "elsewhere"
    elsewhere.mkdir()
    done = tidal(
        "run",
        "../jobs/neighbour.py",
        "-a",
        "out=result",
        "-a",
        "parallelism=2",
        *FAST.split(),
        cwd=elsewhere,
    )
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "result" / "_SUCCESS").exists()  # relative to where it ran
    assert "Token authentication" not in done.stdout + done.stderr
    job_id = done.stdout.split("submitted ", 1)[1].split()[0]
    assert "src -> sink" in " ".join(done.stdout.replace("│", " ").split())  # one chained task

    status = tidal("status", job_id, cwd=job_files)
    assert (
        status.returncode == 0 and "FINISHED" in status.stdout and "submitted 20" in status.stdout
    )
    listed = tidal("list", cwd=job_files)
    assert job_id in listed.stdout and "neighbour" in listed.stdout
    cancel = tidal("cancel", job_id, cwd=job_files)
    assert cancel.returncode == 1
    assert cancel.stderr.strip() == f"job {job_id} has already ended (FINISHED): nothing to cancel"
    logs = tidal("logs", job_id, "--vertex", "src", cwd=job_files)
    assert logs.returncode == 0 and "ran tasks of: " in logs.stdout and "src" in logs.stdout
    missing = tidal("status", "0123456789abcdef", cwd=job_files)
    assert missing.returncode == 2 and missing.stderr.startswith("error: no job '0123456789abcdef'")


KILLS_ITS_JOBMANAGER = """
    import os, signal, time
    import pyarrow as pa
    import ray
    from jobmanager import Client, JobGraph, ParquetSink, Partitioner, arrow
    from jobmanager.messages.jobstatus import JobStatus

    def kill_the_jobmanager_once(marker):
        if os.path.exists(marker):
            return
        open(marker, "w").close()
        for actor in ray.util.list_named_actors(all_namespaces=True):
            if actor["name"].startswith("tidal-job-"):
                try:
                    status = Client().job(actor["name"][len("tidal-job-"):]).status()
                except Exception:  # a standby, or a job that has ended
                    continue
                if status.status is JobStatus.RUNNING:
                    os.kill(status.pid, signal.SIGKILL)

    def build(out, marker):
        def produce():
            kill_the_jobmanager_once(marker)
            time.sleep(2)
            return pa.table({"key": [1, 2, 3]})

        g = JobGraph("kills its jobmanager")
        src = g.add_vertex("src", parallelism=2, operator=arrow(produce))
        g.connect(src, g.add_vertex("sink", operator=ParquetSink(out)), Partitioner.FORWARD)
        return g
"""


@pytest.mark.runtime
def test_a_lost_and_recovered_jobmanager_is_one_line_of_tidals_each_not_rays(tmp_path, ray_cluster):
    write(tmp_path / "kills.py", KILLS_ITS_JOBMANAGER)
    done = tidal(
        "run",
        "kills.py",
        "-a",
        "out=result",
        "-a",
        f"marker={tmp_path / 'killed'}",
        *FAST.split(),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "killed").exists() and (tmp_path / "result" / "_SUCCESS").exists()
    said = [line for line in done.stderr.splitlines() if line.startswith("tidal: ")]
    assert [line.split(" (process")[0] for line in said] == [
        f"tidal: the JobManager of job {done.stdout.split()[1]} was lost",
        f"tidal: the JobManager of job {done.stdout.split()[1]} has recovered",
    ], done.stderr
    for raw in ("A worker died", "retries remaining", "JobManagerActor"):
        assert raw not in done.stdout + done.stderr


@pytest.mark.runtime
def test_a_detached_job_outlives_the_command_that_started_its_cluster(job_files):
    """With no cluster running, ``--detach`` starts one with ``ray start`` that the command
    leaves behind; a new process then waits for the job there. The two commands run in a PID
    namespace of their own (so the tests' cluster is not found, and the one started here ends
    with the namespace) and with a temporary directory of their own for Ray (short: Ray's
    socket paths must fit in 107 bytes), so the tests' Ray never reads this cluster's address."""
    ray_tmp = tempfile.mkdtemp(prefix="tidal-ray-")
    wait = textwrap.dedent("""
        import json, sys
        from jobmanager import Client
        result = Client().job(sys.argv[1]).wait(timeout=120)
        print(json.dumps([result.status, result.vertices["sink"].rows_out]))
    """)
    script = (
        f"{' '.join(TIDAL)} run jobs/neighbour.py -a out=detached --detach {FAST} > run.out "
        f"&& {sys.executable} -c '{wait}' $(sed -n 's/^submitted //p' run.out)"
    )
    try:
        done = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", script],
            cwd=job_files,
            capture_output=True,
            text=True,
            timeout=240,
            env={**os.environ, "RAY_TMPDIR": ray_tmp, "RAY_ADDRESS": ""},
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (job_files / "run.out").read_text().splitlines()
    assert lines[0].startswith("started a local Ray cluster that keeps running")
    assert "ray stop" in lines[0] and lines[1].startswith("submitted ")
    assert json.loads(done.stdout.splitlines()[-1]) == ["FINISHED", 3]
    assert (job_files / "detached" / "_SUCCESS").exists()


def test_a_token_path_that_names_no_file_is_one_line(tmp_path):
    done = tidal("list", cwd=tmp_path, env={"RAY_AUTH_TOKEN_PATH": str(tmp_path / "nope")})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: RAY_AUTH_TOKEN_PATH names {tmp_path / 'nope'}, which cannot be read or is empty"
    ]
