"""Two jobs submitted together on a fresh 2-CPU local cluster: run as a script by
``test_session_cluster.py`` (its own Ray cluster, not the tests' 8-CPU one). An idle
TaskManager is kept for ten minutes (``resourcemanager.taskmanager-timeout``), so a job that
waited for one to time out would not finish within its wait. Prints one JSON object: each
job's status and the TaskManagers its attempts ran on, by name with their slots (from the
job's event log)."""

from __future__ import annotations

import json
import logging
import sys
from collections import Counter

import ray

from jobmanager import Client
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS, TASKMANAGER_IDLE_TIMEOUT
from tests.jobmanager.runtime.jobs import FAST, sum_job

KEPT_IDLE = {**FAST, TASKMANAGER_IDLE_TIMEOUT.key: "10 min"}


def run_together(client: Client, jobs: list[tuple[str, dict]]) -> list[dict]:
    handles = [client.submit(sum_job(out, sources=2, pause=1.0), config) for out, config in jobs]
    ran = []
    for handle in handles:
        result = handle.wait(timeout=120)
        facts = handle.facts()
        slots = Counter(task_manager for task_manager, _ in facts.slots)
        ran.append(
            {
                "status": result.status.value,
                "cause": result.cause,
                "task_managers": {
                    a.task_manager: slots.get(a.task_manager) for a in facts.attempts
                },
            }
        )
        handle.release()
    return ran


def main(out: str) -> None:
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        namespace="tidal",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    client = Client()
    one = {**KEPT_IDLE, NUMBER_OF_TASK_SLOTS.key: 1}
    two = {**KEPT_IDLE, NUMBER_OF_TASK_SLOTS.key: 2}
    together = run_together(client, [(f"{out}/a", one), (f"{out}/b", one)])
    other_shape = run_together(client, [(f"{out}/c", one), (f"{out}/d", two)])
    print(json.dumps({"together": together, "other_shape": other_shape}))


if __name__ == "__main__":
    main(sys.argv[1])
