"""A user's first job on a fresh local cluster, in a process of its own (``python -m
tests.jobmanager.runtime.first_job DATA OUT [at-once]``): warms the client up
(``Client.warm_up``; ``at-once``: not at all), then runs a query; prints, as JSON, the
TaskManagers whose Spark JVM was up once warmed up, those the job's tasks ran on, how many the
ResourceManager started, the JobManagers there were once the query was submitted, whether the
cluster's node runs a dashboard process, the job's id and its status."""

from __future__ import annotations

import json
import sys

import ray
from ray._private import ray_constants

from jobmanager import Client
from jobmanager.client.report import find_job, job_facts
from jobmanager.model.config import TASKMANAGER_IDLE_TIMEOUT, Configuration
from jobmanager.runtime.jobstore import store_root
from jobmanager.runtime.names import NAMESPACE, job_manager_name
from jobmanager.runtime.resourcemanager import resource_manager

DEADLINE_S = 120.0


def spark_up(rm) -> list[str]:
    """The idle TaskManagers whose Spark JVM is up."""
    idle = ray.get(rm.describe.remote())["idle"]
    described = {
        tm: ray.get(ray.get_actor(tm, namespace=NAMESPACE).describe.remote()) for tm in idle
    }
    return [tm for tm, info in described.items() if info["spark_started"]]


def job_managers() -> list[str]:
    """The JobManagers there are, a job's or a standby, by name."""
    names = (
        entry["name"]
        for entry in ray.util.list_named_actors(all_namespaces=True)
        if entry["namespace"] == NAMESPACE
    )
    return sorted(name for name in names if name.startswith(job_manager_name("")))


def main(data: str, out: str, mode: str = "warmed-up") -> None:
    client = Client(address="local", dashboard=False)
    node = ray._private.worker._global_node
    dashboard_process = ray_constants.PROCESS_TYPE_DASHBOARD in node.all_processes
    defaults = Configuration()
    rm = resource_manager(defaults[TASKMANAGER_IDLE_TIMEOUT.key] / 1000, store_root(defaults))
    prepared = []  # at once: not asked, as asking would wait for the ResourceManager's start
    if mode != "at-once":
        if not client.warm_up(timeout=DEADLINE_S):
            raise SystemExit(
                f"not warmed up within {DEADLINE_S:.0f} s: {ray.get(rm.describe.remote())}"
            )
        prepared = spark_up(rm)
    handle = client.sql(
        "SELECT k, sum(v) AS s FROM t GROUP BY k", tables={"t": data}, output=out, overwrite=True
    )
    submitted = job_managers()
    result = handle.wait(timeout=120)
    attempts = job_facts(find_job(handle.job_id), handle.job_id).attempts
    print(
        json.dumps(
            {
                "prepared": prepared,
                "ran_on": sorted({a.task_manager for a in attempts}),
                "created": ray.get(rm.describe.remote())["created"],
                "job_managers": submitted,
                "dashboard_process": dashboard_process,
                "job": handle.job_id,
                "status": result.status,
                "cause": result.cause,
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
