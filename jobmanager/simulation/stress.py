"""``tidal stress``: the real scheduling core against simulated TaskManagers, measured.

It runs a chain of vertices (two by default) joined all-to-all or pointwise by blocking or
pipelined edges, to the end, and reports wall seconds and peak traced memory per phase, the
memory the built execution graph holds, and the numbers of tasks and regions. Timing and memory
come from two runs of the same job: tracing allocations slows Python down several times, so
seconds are measured untraced and bytes traced.

With ``adaptive`` only the first vertex has a parallelism; every other vertex has the given
parallelism as its max, and the adaptive scheduler decides it from the bytes the simulated
producers report (each writes the data volume per task, so the decision comes back to the
max when the bytes are spread evenly). The graph then grows while the job runs, so its phases
interleave: building the graph and its regions is summed over every growth step.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import dataclass, field

from jobmanager.core.state import JobManagerState
from jobmanager.errors import JobGraphError
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    MAX_PARALLELISM,
    NUMBER_OF_TASK_SLOTS,
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner, ResultPartitionType
from jobmanager.simulation.cluster import SimulatedRun, SimulatedTaskManagers, uniform_bytes

__all__ = ["PHASES", "StressReport", "build_stress_job", "run_stress"]

PHASES = ("build_execution_graph", "build_regions", "schedule_and_deploy", "run_to_finish")
VOLUME_PER_TASK = 16 << 20


def build_stress_job(
    parallelism: int, pattern: str, result: str, vertices: int = 2, adaptive: bool = False
) -> JobGraph:
    if vertices < 2:
        raise JobGraphError("a stress job needs at least two vertices")
    partitioner = {"all-to-all": Partitioner.REBALANCE, "pointwise": Partitioner.RESCALE}[pattern]
    if pattern == "pointwise" and not adaptive:
        partitioner = Partitioner.FORWARD
    result_type = ResultPartitionType.parse(result)
    graph = JobGraph(f"stress-{pattern}-{result}-{parallelism}")
    previous = graph.add_vertex("v0", parallelism)
    for i in range(1, vertices):
        if adaptive:
            current = graph.add_vertex(f"v{i}", max_parallelism=parallelism)
        else:
            current = graph.add_vertex(f"v{i}", parallelism)
        graph.connect(previous, current, partitioner, result_type)
        previous = current
    return graph


class _Clock:
    """A probe that attributes the time (or traced memory) between marks to phases."""

    _ENDS = {"execution_graph_built": "build_execution_graph", "regions_built": "build_regions"}

    def __init__(self, traced: bool) -> None:
        self.traced = traced
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.peaks = dict.fromkeys(PHASES, 0)
        self.graph_bytes = 0
        self.started = False
        self._last = self._read()
        self._growth_started_at = 0

    def _read(self) -> tuple[float, int, int]:
        if self.traced:
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            return 0.0, current, peak
        return time.perf_counter(), 0, 0

    def mark(self, point: str) -> None:
        now = self._read()
        activity = "run_to_finish" if self.started else "schedule_and_deploy"
        phase = self._ENDS.get(point, activity)
        if point == "first_task_done":
            phase, self.started = "schedule_and_deploy", True
        self.seconds[phase] += now[0] - self._last[0]
        self.peaks[phase] = max(self.peaks[phase], now[2])
        if point == "initializing":
            self._growth_started_at = now[1]
        elif point == "execution_graph_built":
            self.graph_bytes += now[1] - self._growth_started_at
        self._last = now


@dataclass
class StressReport:
    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    execution_graph_retained_bytes: int = 0
    tasks: int = 0
    regions: int = 0
    status: str = ""
    state_retained_bytes: int = 0
    parallelisms: dict[str, int] = field(default_factory=dict)
    decisions: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "status": self.status,
            "phases": self.phases,
            "execution_graph_retained_bytes": self.execution_graph_retained_bytes,
            "tasks": self.tasks,
            "regions": self.regions,
        }


def _run_once(job: JobGraph, config: Configuration, traced: bool):
    gc.collect()
    if traced:
        tracemalloc.start()
    clock = _Clock(traced)
    baseline = clock._last[1]
    state = JobManagerState(job, config, job_id=job.name, probe=clock)
    cluster = SimulatedTaskManagers(state.graph, uniform_bytes(VOLUME_PER_TASK))
    terminated = SimulatedRun(state, cluster, probe=clock).run([ev.JobStarted()])
    clock.mark("terminated")
    tasks = len(cluster.deployed)
    del cluster
    gc.collect()
    state_bytes = (tracemalloc.get_traced_memory()[0] - baseline) if traced else 0
    if traced:
        tracemalloc.stop()
    return clock, state, tasks, terminated, state_bytes


def run_stress(
    parallelism: int,
    pattern: str = "all-to-all",
    result: str = "blocking",
    vertices: int = 2,
    slots_per_task_manager: int = 100,
    adaptive: bool = False,
) -> StressReport:
    job = build_stress_job(parallelism, pattern, result, vertices, adaptive)
    config = Configuration(
        {
            NUMBER_OF_TASK_SLOTS.key: slots_per_task_manager,
            AVG_DATA_VOLUME_PER_TASK.key: VOLUME_PER_TASK,
            MAX_PARALLELISM.key: parallelism,
        }
    )
    times, state, tasks, terminated, _ = _run_once(job, config, traced=False)
    report = StressReport(
        tasks=tasks,
        regions=len(state.regions),
        status=terminated.status,
        parallelisms={n: v.parallelism for n, v in state.graph.job_vertices.items()},
        decisions={
            n: e.text for n, e in (state.growth.explanations if state.growth else {}).items()
        },
    )
    del state
    memory, _, _, _, state_bytes = _run_once(job, config, traced=True)
    for phase in PHASES:
        report.phases[phase] = {
            "seconds": round(times.seconds[phase], 6),
            "peak_bytes": memory.peaks[phase],
        }
    report.execution_graph_retained_bytes = memory.graph_bytes
    report.state_retained_bytes = state_bytes
    return report
