"""A real job's metrics read back from Ray's Prometheus endpoint, on the cluster ``Client()``
starts by default (Ray's dashboard on): run as a script by ``test_metrics_on_ray.py`` (its own
Ray cluster, not the tests' shared one). Prints one JSON object: what the job's status says,
whether the dashboard's job API answered, and every ``ray_tidal_*`` sample carrying the job's
id, read once they hold the job's final totals, or when the deadline passed."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from dataclasses import asdict

import fsspec
import ray
from prometheus_client.parser import text_string_to_metric_families

from jobmanager import Client
from jobmanager.client import connect as connecting
from tests.jobmanager.runtime.jobs import FAST, sum_job

DEADLINE_S = 90.0  # the samples come some 3 s after the job's end; one suite run saw none in 30 s


def dashboard_job_api_answers(deadline: float) -> bool:
    """What ``ray job submit`` talks to, found as Ray's CLI finds it: the dashboard's job API,
    which lists this process as the cluster's driver (it comes up a while after ``Client()``
    returned: asked until ``deadline``)."""
    from ray.dashboard.utils import get_address_for_submission_client
    from ray.job_submission import JobSubmissionClient

    url = get_address_for_submission_client(ray.get_runtime_context().gcs_address)
    while True:
        try:
            jobs = JobSubmissionClient(url).list_jobs()
        except ConnectionError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
            continue
        return any(
            j.driver_info is not None and j.driver_info.pid == str(os.getpid()) for j in jobs
        )


def samples(port: int, job_id: str) -> list[dict]:
    """The endpoint's ``ray_tidal_*`` samples of the job, as plain dicts."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return [
        {"name": s.name, "labels": s.labels, "value": s.value}
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("ray_tidal_") and s.labels.get("job_id") == job_id
    ]


def total(found: list[dict], name: str, vertex: str) -> float:
    """Summed over the series of every process that counted (``WorkerId``)."""
    return sum(
        s["value"] for s in found if s["name"] == name and s["labels"].get("vertex") == vertex
    )


def main(out: str) -> None:
    connecting._local_cluster = lambda: None  # as on a machine where no cluster runs: Client()
    client = Client(num_cpus=2)  # would join another test's, if it were the only one running
    handle = client.submit(sum_job(out, sources=2), FAST)
    result = handle.wait(timeout=120)
    status = handle.status()
    fs, path = fsspec.core.url_to_fs(handle.event_log())
    log_bytes = fs.du(path)
    ended = time.monotonic()
    port = next(n["MetricsExportPort"] for n in ray.nodes() if n["Alive"])
    deadline = ended + DEADLINE_S
    while True:  # the final totals come with the JobManager's exit, a second after the end;
        # Ray's periodic export may show the last task's counters before the log's final size
        found = samples(port, handle.job_id)
        done = all(
            total(found, "ray_tidal_tasks_finished_total", v.name) == v.tasks
            for v in status.vertices
        )
        done = done and total(found, "ray_tidal_event_log_bytes", None) == log_bytes
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    seconds_after_end = round(time.monotonic() - ended, 2)
    dashboard = dashboard_job_api_answers(time.monotonic() + DEADLINE_S)
    print(
        json.dumps(
            {
                "succeeded": result.succeeded,
                "cause": result.cause,
                "job_id": handle.job_id,
                "vertices": [asdict(v) for v in status.vertices],
                "dashboard_job_api": dashboard,
                "log_bytes": log_bytes,
                "seconds_after_end": seconds_after_end,
                "samples": found,
            }
        )
    )
    handle.release()


if __name__ == "__main__":
    main(sys.argv[1])
