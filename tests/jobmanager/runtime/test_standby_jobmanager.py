"""The standby JobManager: started ahead by the ResourceManager, claimed by the next job."""

from __future__ import annotations

import os

import pytest
import ray

from jobmanager import Client
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import read_details
from jobmanager.runtime.names import NAMESPACE, RESOURCE_MANAGER, job_manager_name
from tests.jobmanager.runtime.jobs import FAST, sum_job

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def standby_id() -> str | None:
    rm = ray.get_actor(RESOURCE_MANAGER, namespace=NAMESPACE)
    return ray.get(rm.describe.remote())["standby"]


def test_the_next_job_runs_on_the_standby_which_is_not_a_job_before(client, tmp_path):
    assert client.warm_up(timeout=120)
    waiting = standby_id()
    assert waiting is not None
    standby_pid = read_details(ray.get(
        ray.get_actor(job_manager_name(waiting), namespace=NAMESPACE).status.remote())).pid
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
