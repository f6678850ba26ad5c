"""``tidal stress``: the real scheduling core against simulated TaskManagers, measured.

It runs a chain of vertices (two by default) joined all-to-all or pointwise by blocking or
pipelined edges, to the end, and reports wall seconds and peak traced memory per phase, the
memory the built execution graph holds, and the numbers of tasks and regions. Timing and memory
come from two runs of the same job: tracing allocations slows Python down several times, so
seconds are measured untraced and bytes traced.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import dataclass, field

from jobmanager import events as ev
from jobmanager.config import Configuration
from jobmanager.jobgraph import JobGraph, Partitioner, ResultPartitionType
from jobmanager.simulation import SimulatedRun, SimulatedTaskManagers, uniform_bytes
from jobmanager.state import JobManagerState

__all__ = ["PHASES", "StressReport", "build_stress_job", "run_stress"]

PHASES = ("build_execution_graph", "build_regions", "schedule_and_deploy", "run_to_finish")
_MARKS = ("execution_graph_built", "regions_built", "first_task_done", "terminated")


def build_stress_job(parallelism: int, pattern: str, result: str, vertices: int = 2) -> JobGraph:
    if vertices < 2:
        raise ValueError("a stress job needs at least two vertices")
    partitioner = {"all-to-all": Partitioner.REBALANCE, "pointwise": Partitioner.FORWARD}[pattern]
    result_type = ResultPartitionType.parse(result)
    graph = JobGraph(f"stress-{pattern}-{result}-{parallelism}")
    previous = graph.add_vertex("v0", parallelism)
    for i in range(1, vertices):
        current = graph.add_vertex(f"v{i}", parallelism)
        graph.connect(previous, current, partitioner, result_type)
        previous = current
    return graph


class _Clock:
    """A probe that notes, per phase mark, the time or the traced memory."""

    def __init__(self, traced: bool) -> None:
        self.traced = traced
        self.marks: dict[str, tuple[float, int, int]] = {}

    def start(self) -> None:
        self.mark("start")

    def mark(self, phase: str) -> None:
        if self.traced:
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            self.marks[phase] = (0.0, current, peak)
        else:
            self.marks[phase] = (time.perf_counter(), 0, 0)


@dataclass
class StressReport:
    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    execution_graph_retained_bytes: int = 0
    tasks: int = 0
    regions: int = 0
    status: str = ""
    state_retained_bytes: int = 0

    def as_json(self) -> dict:
        return {
            "phases": self.phases,
            "execution_graph_retained_bytes": self.execution_graph_retained_bytes,
            "tasks": self.tasks,
            "regions": self.regions,
        }


def _run_once(job: JobGraph, config: Configuration, traced: bool):
    gc.collect()
    clock = _Clock(traced)
    if traced:
        tracemalloc.start()
    clock.start()
    state = JobManagerState(job, config, job_id=job.name, probe=clock)
    cluster = SimulatedTaskManagers(state.graph, uniform_bytes(64 << 20))
    terminated = SimulatedRun(state, cluster, probe=clock).run([ev.JobStarted()])
    clock.mark("terminated")
    tasks = len(cluster.deployed)
    del cluster
    gc.collect()
    clock.mark("state_only")
    if traced:
        tracemalloc.stop()
    return clock.marks, state, tasks, terminated


def run_stress(
    parallelism: int,
    pattern: str = "all-to-all",
    result: str = "blocking",
    vertices: int = 2,
    slots_per_task_manager: int = 100,
) -> StressReport:
    job = build_stress_job(parallelism, pattern, result, vertices)
    config = Configuration({"taskmanager.numberOfTaskSlots": slots_per_task_manager})
    times, state, tasks, terminated = _run_once(job, config, traced=False)
    report = StressReport(tasks=tasks, regions=len(state.regions), status=terminated.status)
    del state
    memory, _, _, _ = _run_once(job, config, traced=True)
    previous = "start"
    for phase, mark in zip(PHASES, _MARKS):
        report.phases[phase] = {
            "seconds": round(times[mark][0] - times[previous][0], 6),
            "peak_bytes": memory[mark][2],
        }
        previous = mark
    report.execution_graph_retained_bytes = (
        memory["execution_graph_built"][1] - memory["start"][1]
    )
    report.state_retained_bytes = memory["state_only"][1] - memory["start"][1]
    return report
