"""Two jobs submitted together on a fresh 2-CPU local cluster: run as a script by
``test_session_cluster.py`` (its own Ray cluster, not the tests' 8-CPU one). Prints one JSON
object of the seconds each run took."""

from __future__ import annotations

import json
import logging
import sys
import time

import ray

from jobmanager import Client
from tests.jobmanager.runtime.jobs import FAST, sum_job


def timed(client: Client, jobs: list[tuple[str, dict]]) -> list[float]:
    began = time.monotonic()
    handles = [client.submit(sum_job(out, sources=2, pause=1.0), config) for out, config in jobs]
    ended = []
    for handle in handles:
        result = handle.wait(timeout=120)
        assert result.succeeded, result.cause
        ended.append(time.monotonic() - began)
        handle.release()
    return ended


def main(out: str) -> None:
    ray.init(num_cpus=2, include_dashboard=False, namespace="tidal",
             logging_level=logging.WARNING, log_to_driver=False)  # fmt: skip
    client = Client()
    one = {**FAST, "taskmanager.numberOfTaskSlots": 1}
    two = {**FAST, "taskmanager.numberOfTaskSlots": 2}
    timed(client, [(f"{out}/warm", one)])
    solo = timed(client, [(f"{out}/solo-a", one)]) + timed(client, [(f"{out}/solo-b", one)])
    together = timed(client, [(f"{out}/a", one), (f"{out}/b", one)])
    other_shape = timed(client, [(f"{out}/c", one), (f"{out}/d", two)])
    print(json.dumps({"solo": solo, "together": together, "other_shape": other_shape}))


if __name__ == "__main__":
    main(sys.argv[1])
