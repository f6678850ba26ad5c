"""Ray's actor table, as the TaskManager watch reads it for a death line no name lookup
explained: a SIGKILLed TaskManager's process is still known there as a TaskManager's."""

from __future__ import annotations

import os
import signal

import pytest
import ray

from jobmanager.client.taskmanager_watch import taskmanager_pid, was_a_taskmanager
from jobmanager.runtime.actorclass import actor_class
from jobmanager.runtime.names import NAMESPACE
from taskmanager.actor import TaskManagerActor

pytestmark = pytest.mark.runtime


def test_a_killed_taskmanagers_process_is_still_a_taskmanagers_in_rays_actor_table(ray_cluster):
    name = "tidal-test-watched-tm"
    actor = (
        actor_class(TaskManagerActor)
        .options(name=name, namespace=NAMESPACE, num_cpus=0, max_restarts=0)
        .remote(name, spare=True)
    )
    pid = ray.get(actor.describe.remote(), timeout=120)["pid"]
    assert taskmanager_pid(name) == pid
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(actor.describe.remote(), timeout=60)
    assert was_a_taskmanager(pid)
    assert not was_a_taskmanager(os.getpid())  # the driver is no TaskManager
