"""The configuration the ResourceManager and a TaskManager read is the job's, crossed as its
msgpack form and parsed once by ``Configuration``: a non-default option the job set is what
they act on, and an option it did not set is the one default ``OPTIONS`` holds."""

from __future__ import annotations

from jobmanager.model.config import (
    OPTIONS,
    PREVIOUS_WORKER_RECOVERY_TIMEOUT,
    SPARK_DRIVER_MEMORY,
    TASKMANAGER_IDLE_TIMEOUT,
    TASKMANAGER_NODE_ID,
    TMP_DIRS,
    Configuration,
)
from jobmanager.runtime.resourcemanager import _timeouts
from taskmanager.actor import shape_of


def crossed(values: dict) -> Configuration:
    return Configuration.from_bytes(Configuration(values).to_bytes())


def test_a_configuration_crosses_as_msgpack_to_the_same_values():
    job = Configuration(
        {
            SPARK_DRIVER_MEMORY.key: "2g",
            TMP_DIRS.key: "/scratch",
            TASKMANAGER_IDLE_TIMEOUT.key: "5 s",
            TASKMANAGER_NODE_ID.key: "node-b",
        }
    )
    assert Configuration.from_bytes(job.to_bytes()).to_dict() == job.to_dict()


def test_the_resource_manager_keeps_a_task_manager_for_the_jobs_timeouts():
    config = crossed(
        {
            TASKMANAGER_IDLE_TIMEOUT.key: "5 s",
            PREVIOUS_WORKER_RECOVERY_TIMEOUT.key: "2 min",
        }
    )
    assert _timeouts(config) == (120.0, 5.0)
    recovery = OPTIONS[PREVIOUS_WORKER_RECOVERY_TIMEOUT.key].default
    idle = OPTIONS[TASKMANAGER_IDLE_TIMEOUT.key].default
    assert _timeouts(crossed({})) == (recovery / 1000, idle / 1000)


def test_a_task_managers_shape_is_read_from_the_parsed_options():
    assert shape_of(2, crossed({SPARK_DRIVER_MEMORY.key: "2g", TMP_DIRS.key: "/s"})) == (
        2,
        2 << 30,
        "/s",
    )
    # a job that says nothing asks for the same TaskManager as one that sets the defaults
    defaults = {SPARK_DRIVER_MEMORY.key: OPTIONS[SPARK_DRIVER_MEMORY.key].default}
    assert shape_of(2, crossed({})) == shape_of(2, crossed(defaults))
