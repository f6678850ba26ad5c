"""The terminal of a user whose TaskManager is SIGKILLed mid-job: Tidal's two lines (the loss,
then the job's recovery from it), and none of Ray's raw lines about the dead process.

The job runs in a process of its own, as a user's script does, on a Ray cluster it starts
(with a Ray directory of its own, so the tests' cluster never reads its address); a thread of
that script kills the job's one TaskManager once its sources have finished and both sums are
running, and opens the sums' gate once the loss shows in the job's details."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

pytestmark = pytest.mark.runtime

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time

    import ray

    from jobmanager import Client, JobGraph, ParquetSink, Partitioner, arrow
    from jobmanager.model.config import MAX_SLOTS, NUMBER_OF_TASK_SLOTS
    from tests.jobmanager.runtime.jobs import FAST, numbers

    work = sys.argv[1]
    gate = os.path.join(work, "open")


    def wait_then_sum(table):
        while not os.path.exists(gate):
            time.sleep(0.02)
        return table.group_by("key").aggregate([("value", "sum")])


    def wait_for(condition, what, timeout=120.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = condition()
            if found:
                return found
            time.sleep(0.05)
        os._exit(f"not seen within {timeout} s: {what}")


    g = JobGraph("gated-sums")
    src = g.add_vertex("numbers", parallelism=4, operator=arrow(numbers(1000)))
    agg = g.add_vertex("sum", parallelism=2, operator=arrow(wait_then_sum))
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, g.add_vertex("sink", operator=ParquetSink(os.path.join(work, "out"))),
              Partitioner.FORWARD)
    client = Client("local", num_cpus=4, dashboard=False)
    handle = client.submit(g, config={**FAST, MAX_SLOTS.key: 2, NUMBER_OF_TASK_SLOTS.key: 2})


    def sums_running():
        status = handle.status()
        by_member = {member: v for v in status.vertices for member in v.members}
        return by_member["numbers"].done and by_member["sum"].running == 2 and status


    def kill_then_open():
        (victim,) = wait_for(sums_running, "both sums running").task_managers
        os.kill(ray.get(ray.get_actor(victim, namespace="tidal").ping.remote()), signal.SIGKILL)
        wait_for(lambda: handle.status().task_manager_losses, "the loss in the details")
        open(gate, "w").close()


    threading.Thread(target=kill_then_open, daemon=True).start()
    result = handle.wait(timeout=180)
    print("job ended:", result.status, flush=True)
""")


def test_a_killed_taskmanager_is_two_lines_of_tidals_and_none_of_rays(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    ray_tmp = tempfile.mkdtemp(prefix="tidal-ray-")  # short: Ray's socket paths fit 107 bytes
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        done = subprocess.run(
            [sys.executable, str(script), str(tmp_path)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "RAY_TMPDIR": ray_tmp, "RAY_ADDRESS": "", "PYTHONPATH": root},
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    terminal = done.stdout + done.stderr
    assert done.returncode == 0, terminal[-3000:]
    assert "job ended: FINISHED" in done.stdout, terminal[-3000:]
    tidal = [line for line in terminal.splitlines() if line.startswith("tidal: ")]
    assert len(tidal) == 2, terminal[-3000:]
    lost, recovered = tidal
    assert lost.startswith("tidal: TaskManager tidal-tm-") and " on node " in lost, lost
    assert lost.endswith(
        "was lost; its 2 running tasks run again, 4 finished outputs kept on its node"
    ), lost
    victim = lost.split()[2]
    assert recovered.startswith("tidal: job ") and recovered.endswith(
        f" recovered from the loss of TaskManager {victim}"
    ), recovered
    assert "(raylet)" not in terminal and "worker died" not in terminal, terminal[-3000:]
    assert "TaskManagerActor" not in terminal and "ActorDiedError" not in terminal
