"""The standby JobManager: started ahead by the ResourceManager, claimed by the next job, which
it starts leasing a TaskManager for as soon as it has it."""

from __future__ import annotations

import os
import threading
import time

import pyarrow.parquet as pq
import pytest
import ray

from jobmanager import Client, JobGraph, ParquetSink, Partitioner, arrow
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import read_details
from jobmanager.runtime.names import NAMESPACE, RESOURCE_MANAGER, job_manager_name
from tests.jobmanager.runtime.failover_jobs import GatedSource, write_data
from tests.jobmanager.runtime.test_failover_on_ray import eventually
from tests.jobmanager.runtime.jobs import FAST, sum_job

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def standby_id() -> str | None:
    return resource_manager_says()["standby"]


def resource_manager_says() -> dict:
    rm = ray.get_actor(RESOURCE_MANAGER, namespace=NAMESPACE)
    return ray.get(rm.describe.remote())


def test_the_next_job_runs_on_the_standby_which_is_not_a_job_before(client, tmp_path):
    assert client.warm_up(timeout=120)
    waiting = standby_id()
    assert waiting is not None
    standby_pid = read_details(
        ray.get(ray.get_actor(job_manager_name(waiting), namespace=NAMESPACE).status.remote())
    ).pid
    assert waiting not in {job.job_id for job in client.list()}
    with pytest.raises(LookupError):
        client.job(waiting)

    handle = client.submit(sum_job(str(tmp_path / "out")), config=FAST)
    assert handle.job_id == waiting
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    assert handle.status().pid == standby_pid  # no process was started for the job
    assert client.job(waiting).status().status is JobStatus.FINISHED
    assert standby_id() != waiting  # claimed: the next standby, if any, is another
    handle.release()


def test_a_killed_standby_is_restarted_and_still_runs_the_next_job(client, tmp_path):
    assert client.warm_up(timeout=120)
    killed = standby_id()
    actor = ray.get_actor(job_manager_name(killed), namespace=NAMESPACE)
    pid = read_details(ray.get(actor.status.remote())).pid
    os.kill(pid, 9)

    handle = client.submit(sum_job(str(tmp_path / "out")), config=FAST)
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    assert handle.status().pid != pid
    handle.release()


def test_a_jobmanager_runs_one_job_only(client, tmp_path):
    handle = client.submit(sum_job(str(tmp_path / "out")), config=FAST)
    assert handle.wait(timeout=120).status == "FINISHED"
    with pytest.raises(ray.exceptions.RayTaskError, match="already runs a job"):
        ray.get(handle.actor.start.remote(b"", {}, 0.0))
    handle.release()


def test_a_jobmanager_leases_its_first_taskmanager_while_it_is_still_taking_the_job(
    client, tmp_path
):
    """The lease goes out before the job's sources are asked (``EarlyLease``): held at the
    gate in that listing, the JobManager has a TaskManager leased to the job already."""
    data, gate = str(tmp_path / "data"), tmp_path / "gate"
    gate.mkdir()
    sums = write_data(data)
    g = JobGraph("early-lease")
    read = g.add_vertex(
        "read",
        operator=arrow(lambda t: t.select(["key", "value"])),
        sources=[GatedSource(data, str(gate))],
    )
    total = g.add_vertex(
        "sum",
        parallelism=1,
        operator=arrow(lambda t: t.group_by("key").aggregate([("value", "sum")])),
    )
    sink = g.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out")))
    g.connect(read, total, Partitioner.hash("key"))
    g.connect(total, sink, Partitioner.FORWARD)
    assert client.warm_up(timeout=120)
    handles = []
    submitting = threading.Thread(target=lambda: handles.append(client.submit(g, config=FAST)))
    submitting.start()
    try:
        deadline = time.monotonic() + 60
        while not (gate / "inferring").exists():  # the JobManager is asking the source
            assert time.monotonic() < deadline, "the job's source was never asked"
            time.sleep(0.02)
        rm = ray.get_actor(RESOURCE_MANAGER, namespace=NAMESPACE)
        while not ray.get(rm.describe.remote())["leased"]:
            assert time.monotonic() < deadline, "no TaskManager leased while the job was taken"
            time.sleep(0.02)
        leased_to = set(ray.get(rm.describe.remote())["leased"].values())
        assert submitting.is_alive()  # still taking the job: the submission has not returned
    finally:
        (gate / "open").touch()
        submitting.join(timeout=120)
    (handle,) = handles
    assert leased_to == {handle.job_id}
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    written = pq.read_table(str(tmp_path / "out")).to_pydict()
    assert dict(zip(written["key"], written["value_sum"])) == sums
    handle.release()


def test_every_standby_is_one_class_to_ray_which_a_client_loads_once(client, tmp_path):
    """``actor_class``: a class made anew per standby would be loaded from the GCS again by the
    client claiming each one."""
    classes = set()
    for run in range(2):
        assert client.warm_up(timeout=120)
        handle = client.submit(sum_job(str(tmp_path / f"out-{run}")), config=FAST)
        classes.add(handle.actor._ray_actor_creation_function_descriptor.function_id)
        assert handle.wait(timeout=120).status == "FINISHED"
        handle.release()
    assert len(classes) == 1


def test_a_job_submitted_as_the_last_one_ends_claims_a_standby_ready_before_that_end(
    client, tmp_path
):
    """Two standbys are kept after a job: the next query of a script running queries in turn
    does not wait for the one the last job's end started (``STANDBY_JOB_MANAGERS``)."""
    first = client.submit(sum_job(str(tmp_path / "first")), config=FAST)
    assert first.wait(timeout=120).status == "FINISHED"
    eventually(lambda: resource_manager_says()["standbys"] == 2, "two standbys after a job")
    second = client.submit(sum_job(str(tmp_path / "second")), config=FAST)
    assert second.wait(timeout=120).status == "FINISHED"
    ready = standby_id()  # at once: the one left when the second job claimed the other
    assert ready is not None
    third = client.submit(sum_job(str(tmp_path / "third")), config=FAST)
    assert third.job_id == ready
    assert third.wait(timeout=120).status == "FINISHED"
    for handle in (first, second, third):
        handle.release()
