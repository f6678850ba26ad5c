"""Simulated TaskManagers: drive the real scheduling core with no Ray, no Spark and no data.

They answer each command the way a cluster would, at once: TaskManagers register when asked
for, a deployed task finishes with synthetic byte counts, a cancelled task reports cancelled, a
timer fires after its delay on a simulated clock. This is how the core is run at 10,000 x
10,000 in one process, in a test or ``tidal stress``. Nothing here is the runtime; the Ray
TaskManager is.
"""

from __future__ import annotations

import random
import zlib
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

import numpy as np

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionGraph
from jobmanager.core.executiongraph.result_bytes import needs_breakdown
from jobmanager.core.state import JobManagerState, Probe
from jobmanager.messages import events as ev
from jobmanager.model.inference import infer_vertex_parallelism
from shuffle.ids import PartitionId
from shuffle.paths import partition_path

__all__ = [
    "ByteModel",
    "SimulatedRun",
    "SimulatedTaskManagers",
    "TaskFault",
    "uniform_bytes",
]

ByteModel = Callable[[str, int, str, int], bytes]
"""(vertex, subtask, result, subpartitions) -> bytes written to each subpartition, packed as
``ProducedPartition.subpartition_bytes`` (little-endian int64)."""


def uniform_bytes(per_task: int) -> ByteModel:
    """Each task writes ``per_task`` bytes spread evenly over its subpartitions (a
    ``total_bytes`` attribute tells a report that needs no breakdown without building one)."""
    cache: dict[int, bytes] = {}

    def model(vertex: str, subtask: int, result: str, subpartitions: int) -> bytes:
        packed = cache.get(subpartitions)
        if packed is None:
            counts = np.full(subpartitions, per_task // subpartitions, dtype="<i8")
            counts[: per_task % subpartitions] += 1
            packed = cache[subpartitions] = counts.tobytes()
        return packed

    model.total_bytes = per_task
    return model


@dataclass(frozen=True, slots=True)
class TaskFault:
    """Make one attempt of one subtask fail (optionally blaming a lost input partition)."""

    vertex: str
    subtask: int
    attempt: int = 0
    error: str = "simulated failure"
    lost_partition: object = None
    error_types: tuple[str, ...] = ()


class SimulatedTaskManagers:
    """Answers commands with the events a healthy cluster would send back."""

    def __init__(
        self,
        graph: ExecutionGraph,
        byte_model: ByteModel = uniform_bytes(1 << 20),
        faults: Iterable[TaskFault] = (),
        filter_values: Callable[[str, int], tuple[str, ...]] | None = None,
        reports_running: bool = False,
        range_samples: Callable[[str, int, int], tuple[bytes, ...]] | None = None,
    ) -> None:
        """``range_samples``: (result, subtask, subpartitions) -> the sample a producer of a
        range-partitioned result reports (``ProducedPartition.range_bounds``); by default the
        byte model's ``range_samples`` attribute, if it has one (its bytes and samples agree)."""
        self.graph = graph
        self.range_samples = range_samples or getattr(byte_model, "range_samples", None)
        self.reports_running = reports_running
        self.byte_model = byte_model
        self.filter_values = filter_values
        self.faults = {(f.vertex, f.subtask, f.attempt): f for f in faults}
        self.clock_ms = 0
        self.task_managers = 0
        self.deployed: list[tuple[str, int, int]] = []
        self.released: list = []
        self.terminated: cmd.JobTerminated | None = None
        # per TaskManager, the files its finished tasks wrote: (result, index, attempt, size)
        self.files: dict[str, list[tuple[str, int, int, int]]] = {}

    def answer(self, command: object) -> list[object]:
        kind = type(command)
        if kind is cmd.DeployTask:
            if self.reports_running:  # as a real TaskManager does, before the result
                running = ev.TaskRunning(
                    command.vertex, command.subtask, command.attempt, self.clock_ms
                )
                return [running, self._run(command)]
            return [self._run(command)]
        if kind is cmd.RequestTaskManagers:
            registered = []
            for _ in range(command.count):
                name = f"sim-tm-{self.task_managers}"
                registered.append(
                    ev.TaskManagerRegistered(name, command.slots_each, "sim-node", f"/sim/{name}")
                )
                self.task_managers += 1
            return registered
        if kind is cmd.CancelTask:
            return [ev.TaskCanceled(command.vertex, command.subtask, command.attempt)]
        if kind is cmd.StartTimer:
            self.clock_ms += command.delay_ms
            return [ev.TimerFired(command.token, self.clock_ms)]
        if kind is cmd.ReleasePartitions:
            self.released.extend(command.partitions)
            return []
        if kind is cmd.JobTerminated:
            self.terminated = command
            return []
        raise TypeError(f"simulated TaskManagers cannot do {command!r}")

    def _run(self, deploy: cmd.DeployTask) -> object:
        key = (deploy.vertex, deploy.subtask, deploy.attempt)
        self.deployed.append(key)
        fault = self.faults.get(key)
        if fault is not None:
            return ev.TaskFailed(
                *key, fault.error, self.clock_ms, fault.lost_partition, fault.error_types
            )
        vertex = self.graph.vertex(deploy.vertex, deploy.subtask)
        produced = []
        for p in vertex.produced:
            n = p.result.subpartition_count(p.index)
            values = ()
            if self.filter_values is not None and p.result.edge.dynamic_filtering:
                values = self.filter_values(p.result.id, deploy.subtask)
            report = self._report(deploy, p, n, values)
            if self.range_samples is not None and p.result.edge.partitioner.is_range:
                report = replace(
                    report, range_bounds=self.range_samples(p.result.id, deploy.subtask, n)
                )
            size = 64 + p.index
            files = self.files.setdefault(deploy.task_manager, [])
            files.append((p.result.id, p.index, deploy.attempt, size))
            produced.append(replace(report, file_size=size, file_checksum=_checksum(files[-1])))
        return ev.TaskFinished(*key, tuple(produced))

    def lost(self, task_manager: str, time_ms: int, node_up: bool) -> ev.TaskManagerLost:
        """The event of ``task_manager`` dying; with ``node_up``, its node's survey finds every
        file its finished tasks wrote, whole."""
        if not node_up:
            return ev.TaskManagerLost(task_manager, "killed", time_ms, "sim-node")
        kept = []
        for written in self.files.get(task_manager, ()):
            result, index, attempt, size = written
            path = partition_path(f"/sim/{task_manager}", PartitionId(result, index), attempt)
            kept.append((path, size, _checksum(written)))
        return ev.TaskManagerLost(task_manager, "killed", time_ms, "sim-node", tuple(kept))

    def _report(self, deploy: cmd.DeployTask, partition, n: int, values) -> ev.ProducedPartition:
        """The report a TaskManager would send (``ProducedPartition.of``); a uniform model's
        total-only report is made without building the n numbers, as a TaskManager's writer
        counts them as it writes."""
        result = partition.result
        uniform = getattr(self.byte_model, "total_bytes", None)
        breakdown = needs_breakdown(result, partition.index)
        if uniform is not None and not breakdown and min(uniform, n) > n // 8:  # dense
            return ev.ProducedPartition.total_only(result.id, uniform, n, values)
        packed = self.byte_model(deploy.vertex, deploy.subtask, result.id, n)
        counts = np.frombuffer(packed, dtype="<i8")
        if breakdown and np.count_nonzero(counts) > n // 8:  # dense: the model's bytes, shared
            return ev.ProducedPartition(result.id, packed, values)
        return ev.ProducedPartition.of(result.id, counts, breakdown, values)


def _checksum(written: tuple) -> int:
    """A file's fingerprint in the simulation: a stable function of what wrote it."""
    return zlib.crc32(repr(written).encode())


@dataclass
class SimulatedRun:
    """Feeds the core's commands to simulated TaskManagers and their answers back, until the
    job terminates. ``shuffle`` picks the next event at random (seeded) instead of in order,
    so tests see tasks finish out of order. ``inject[n]`` events happen right after the n-th
    event (a TaskManager dying mid-job, say). A ``probe`` is told when the first task result
    comes back, which ends the stress run's deployment phase."""

    state: JobManagerState
    cluster: SimulatedTaskManagers
    record: bool = False
    shuffle: random.Random | None = None
    probe: Probe | None = None
    inject: dict[int, list] = field(default_factory=dict)
    events: list = field(default_factory=list)
    queue: deque = field(default_factory=deque)
    applied: int = 0

    def run(
        self,
        first: Iterable[object] = (ev.JobStarted(),),
        max_events: int = 10**8,
        stop_after: int | None = None,
    ):
        """Run until the job terminates (its JobTerminated command) or, with ``stop_after``,
        until that many events were applied in all: then None, with the undelivered answers
        left in ``queue`` (where a crash of the JobManager would leave them)."""
        queue = self.queue
        queue.extend(first)
        first_result = self.probe is not None
        while queue and self.cluster.terminated is None:
            if stop_after is not None and self.applied >= stop_after:
                return None
            if self.shuffle is not None and len(queue) > 1:
                queue.rotate(-self.shuffle.randrange(len(queue)))
            event = queue.popleft()
            if first_result and type(event) in (ev.TaskFinished, ev.TaskFailed):
                self.probe.mark("first_task_done")
                first_result = False
            self._apply(event)
            if self.applied >= max_events:
                raise RuntimeError(f"the job did not terminate within {max_events} events")
        return self.cluster.terminated

    def _apply(self, event: object) -> None:
        """Apply one event: queue the cluster's answers to its commands, then any event
        injected after this many (one given as a function of the cluster is made now)."""
        if callable(event):
            event = event(self.cluster)
        step = self.state.handle(event)
        if self.record:
            self.events.append(event)
            self.events.extend(step.events)
        for command in step.commands:
            self.queue.extend(self._carry_out(command) or self.cluster.answer(command))
        self.applied += 1
        if self.applied in self.inject:
            self.queue.extendleft(reversed(self.inject[self.applied]))

    def _carry_out(self, command: object) -> list | None:
        """The JobManager shell's own work: source inference."""
        if type(command) is cmd.InferSourceParallelism:
            sources = self.state.graph.job_graph.vertex(command.vertex).sources
            return [infer_vertex_parallelism(command.vertex, sources, command.context)]
        return None
