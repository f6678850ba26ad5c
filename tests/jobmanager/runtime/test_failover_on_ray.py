"""JobManager failover on a real local Ray cluster with real PySpark: the JobManager process is
killed by pid at a chosen point of a job, Ray restarts it, the new one replays the job's log,
reconciles with the TaskManagers and finishes the job. No finished task whose partition
survived runs again: every vertex has as many deployments as tasks."""

from __future__ import annotations

import os
import time

import pyarrow.parquet as pq
import pytest

from jobmanager import Client, ParquetSink
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS, SNAPSHOT_MIN_PAUSE, Configuration
from jobmanager.model.operators import staging_dir
from jobmanager.runtime.details import VertexDetails
from jobmanager.runtime.jobstore import store_root
from jobmanager.runtime.sinks import committed_by
from tests.jobmanager.runtime.failover_jobs import PARTS, failover_job, write_data
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {**FAST, NUMBER_OF_TASK_SLOTS.key: 2}


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


@pytest.fixture
def job(tmp_path):
    data, gate = str(tmp_path / "data"), tmp_path / "gate"
    gate.mkdir()
    return data, str(tmp_path / "out"), gate, write_data(data)


def eventually(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def kill_job_manager(handle) -> int:
    pid = handle.status().pid
    os.kill(pid, 9)
    return pid


def started(gate) -> int:
    return sum(1 for p in gate.iterdir() if p.name.startswith("started-"))


def vertex(handle, name: str) -> VertexDetails:
    return next(v for v in handle.status().vertices if v.name == name)


def check_finished(handle, out: str, expected: dict[int, int], killed: list[int]):
    result = handle.wait(timeout=240)
    assert result.status == "FINISHED", result.cause
    table = pq.read_table(out)
    assert (
        dict(zip(table.column("key").to_pylist(), table.column("value_sum").to_pylist()))
        == expected
    )
    for report in result.vertices.values():
        assert report.deployments == report.tasks, report  # no finished task ran again
    status = handle.status()
    assert status.pid not in killed
    assert status.recoveries == len(killed)
    assert committed_by(out) == handle.job_id
    handle.release()
    return result


def test_killed_while_a_source_parallelism_is_inferred(client, job):
    data, out, gate, expected = job
    handle = client.submit(failover_job(data, out, str(gate), at="inference"), config=CONFIG)
    eventually(lambda: (gate / "inferring").exists(), "the inference to start")
    killed = [kill_job_manager(handle)]
    (gate / "open").touch()
    result = check_finished(handle, out, expected, killed)
    assert result.vertices["read"].parallelism == PARTS


def test_killed_in_the_middle_of_a_stage(client, job):
    """One source task finished, three running: the finished one stays finished, the running
    ones keep running and report to the new JobManager."""
    data, out, gate, expected = job
    handle = client.submit(failover_job(data, out, str(gate), at="source"), config=CONFIG)
    eventually(
        lambda: started(gate) == PARTS - 1 and vertex(handle, "read").finished == 1,
        "one source task finished and three waiting",
    )
    killed = [kill_job_manager(handle)]
    (gate / "open").touch()
    check_finished(handle, out, expected, killed)


def test_killed_between_stages(client, job):
    """Every source task finished, the PySpark stage deployed but not finished: the sources'
    partitions survive on their TaskManagers and are read, not recomputed."""
    data, out, gate, expected = job
    handle = client.submit(failover_job(data, out, str(gate), at="sum"), config=CONFIG)
    eventually(
        lambda: started(gate) >= 1 and vertex(handle, "read").finished == PARTS,
        "the sources finished and the sum waiting",
    )
    killed = [kill_job_manager(handle)]
    (gate / "open").touch()
    check_finished(handle, out, expected, killed)


def test_killed_during_the_sink_commit(client, job):
    """The old target is large, so removing it after the new result took its place (one
    exchange of the two directories) takes a while; the JobManager dies while it does. The new
    one finishes the commit: the target holds the new result whole, and the old one is gone."""
    data, out, gate, expected = job
    os.makedirs(out)
    for n in range(20_000):
        open(os.path.join(out, f"old-{n}.txt"), "w").close()
    handle = client.submit(failover_job(data, out, str(gate), at="nowhere"), config=CONFIG)
    staging = staging_dir(ParquetSink(out), handle.job_id)
    eventually(
        lambda: committed_by(out) == handle.job_id and os.path.isdir(staging),
        "the new result published, the old one being removed",
        timeout=240,
    )
    killed = [kill_job_manager(handle)]
    check_finished(handle, out, expected, killed)
    assert not os.path.exists(staging)
    assert not any(name.startswith("old-") for name in os.listdir(out))


def test_killed_twice_in_one_job_recovering_from_a_snapshot(client, job):
    data, out, gate, expected = job
    config = {**CONFIG, SNAPSHOT_MIN_PAUSE.key: "1 ms"}
    handle = client.submit(failover_job(data, out, str(gate), at="source"), config=config)
    eventually(
        lambda: started(gate) == PARTS - 1 and vertex(handle, "read").finished == 1,
        "one source task finished and three waiting",
    )
    snapshots = os.path.join(store_root(Configuration()), handle.job_id, "snapshots")
    eventually(lambda: os.path.isdir(snapshots) and os.listdir(snapshots), "a snapshot")
    killed = [kill_job_manager(handle)]
    eventually(lambda: handle.status().status is JobStatus.RUNNING, "the job to run again")
    killed.append(kill_job_manager(handle))
    (gate / "open").touch()
    check_finished(handle, out, expected, killed)
