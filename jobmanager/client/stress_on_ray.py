"""``tidal stress --on-ray``: the synthetic N x N job of ``tidal stress``, run for real.

The same chain of vertices (``jobmanager.simulation.stress.build_stress_job``) gets no-op Arrow
operators: the first vertex makes a one-row table per task, the others pass their input on. It
runs on a real Ray cluster (the local one by default) with real TaskManagers, real partition
files and real subpartition reads, so a user can stress-test their own cluster: the figures
are those of the simulated mode where they apply (seconds per phase, tasks), and those only a
real run has: tasks per second, the JobManager main loop's latency per batch of events (median
and p99), the peak memory of the JobManager and of the largest TaskManager, and how many
subpartition ranges the tasks read. Phases come from the times the JobManager recorded:
submission to the first deployment (the JobManager taking the job, TaskManagers leased), to
the first task finished, to the job's end.
"""

from __future__ import annotations

import time
from typing import Callable

import pyarrow as pa
import ray

from jobmanager.client.client import Client, JobHandle
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.operators import arrow
from jobmanager.runtime.names import NAMESPACE, resource_manager_handle
from jobmanager.simulation.stress import build_stress_job

__all__ = ["ON_RAY_PHASES", "build_on_ray_job", "run_on_ray"]

ON_RAY_PHASES = ("submit_to_first_deployment", "schedule_and_deploy", "run_to_finish")


def one_row() -> pa.Table:
    return pa.table({"value": pa.array([1], pa.int64())})


def pass_on(table: pa.Table) -> pa.Table:
    return table


def build_on_ray_job(
    parallelism: int, pattern: str, result: str, vertices: int = 2, adaptive: bool = False
) -> JobGraph:
    graph = build_stress_job(parallelism, pattern, result, vertices, adaptive)
    for index, vertex in enumerate(graph.vertices):
        vertex.operator = arrow(one_row if index == 0 else pass_on)
    return graph


def run_on_ray(
    parallelism: int,
    pattern: str = "all-to-all",
    result: str = "blocking",
    vertices: int = 2,
    adaptive: bool = False,
    address: str | None = None,
    config: dict | None = None,
    on_submit: Callable[[JobHandle], None] | None = None,
) -> dict:
    """Run the job to its end and return its figures (``on_submit`` gets the handle as soon as
    there is one, so a caller can cancel the job)."""
    client = Client(address)
    client.warm_up()
    began = time.perf_counter()
    handle = client.submit(
        build_on_ray_job(parallelism, pattern, result, vertices, adaptive), config=config or {}
    )
    if on_submit is not None:
        on_submit(handle)
    handle.wait()
    wall = time.perf_counter() - began
    return figures(handle, wall)


def figures(handle: JobHandle, wall_seconds: float) -> dict:
    status = handle.status()
    tasks = sum(v.tasks for v in status.vertices)
    submitted, ended = status.submitted_at, status.ended_at or time.time()
    deployed = status.first_deployed_at or ended
    first_done = status.first_task_finished_at or ended
    process = status.jobmanager
    return {
        "mode": "on-ray",
        "status": status.status.value,
        "job_id": handle.job_id,
        "phases": {
            "submit_to_first_deployment": {"seconds": round(deployed - submitted, 6)},
            "schedule_and_deploy": {"seconds": round(first_done - deployed, 6)},
            "run_to_finish": {"seconds": round(ended - first_done, 6)},
        },
        "wall_seconds": round(wall_seconds, 6),
        "tasks": tasks,
        "tasks_per_second": round(tasks / max(ended - deployed, 1e-9), 1),
        "jobmanager_loop": {
            "batches": process.loop_batches,
            "median_ms": process.loop_median_ms,
            "p99_ms": process.loop_p99_ms,
        },
        "jobmanager_peak_rss_bytes": process.peak_rss_bytes,
        "taskmanager_peak_rss_bytes": _largest_task_manager_rss(),
        "subpartition_reads": sum(v.ranges_read for v in status.vertices),
        "vertices": {v.name: v.parallelism for v in status.vertices},
    }


def _largest_task_manager_rss() -> int | None:
    """The peak memory of the largest TaskManager process the cluster has now."""
    try:
        described = ray.get(resource_manager_handle().describe.remote())
    except ValueError:
        return None
    names = [*described["idle"], *described["leased"]]
    handles = []
    for name in names:
        try:
            handles.append(ray.get_actor(name, namespace=NAMESPACE))
        except ValueError:  # stopped meanwhile
            continue
    peaks = []
    for ref in [h.describe.remote() for h in handles]:
        try:
            peaks.append(ray.get(ref, timeout=30)["peak_rss_bytes"])
        except (ray.exceptions.RayError, KeyError):
            continue
    return max(peaks, default=None)
