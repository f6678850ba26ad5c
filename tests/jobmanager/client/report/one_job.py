"""Run one small Arrow job on a Ray cluster of its own, started in this process and gone
when it exits; print the job's id. Run as a script by ``test_ended_cluster.py``."""

from __future__ import annotations

import logging
import sys

import ray

from jobmanager import Client
from tests.jobmanager.runtime.jobs import FAST, sum_job


def main(out: str) -> None:
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        namespace="tidal",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    handle = Client().submit(sum_job(out, sources=3, rows=3000), FAST)
    result = handle.wait(timeout=120)
    assert result.succeeded, result.cause
    print(handle.job_id)


if __name__ == "__main__":
    main(sys.argv[1])
