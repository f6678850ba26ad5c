"""Test builders and recorders for the scheduling core (first-class test code, not mocks).

``TopologyBuilder`` builds a real JobGraph and ExecutionGraph with regions in a few lines;
``RecordingOperations`` stands in for the slot pool and records what a strategy deploys.
"""

from __future__ import annotations

from jobmanager.core.executiongraph import ExecutionGraph, ExecutionState, ExecutionVertex
from jobmanager.core.scheduler.regions import PipelinedRegions
from jobmanager.model.jobgraph import JobGraph, JobVertex, Partitioner, ResultPartitionType

BLOCKING = ResultPartitionType.BLOCKING
PIPELINED = ResultPartitionType.PIPELINED


class TopologyBuilder:
    def __init__(self, name: str = "test", dynamic: bool = False) -> None:
        self.job = JobGraph(name)
        self.dynamic = dynamic
        self._count = 0

    def add_vertices(self, parallelism: int | None, name: str | None = None, **kw) -> JobVertex:
        name = name or f"v{self._count}"
        self._count += 1
        return self.job.add_vertex(name, parallelism, **kw)

    def connect_all_to_all(self, a: JobVertex, b: JobVertex, result=BLOCKING):
        return self.job.connect(a, b, Partitioner.REBALANCE, result)

    def connect_pointwise(self, a: JobVertex, b: JobVertex, result=BLOCKING):
        return self.job.connect(a, b, Partitioner.RESCALE, result)

    def build(self, listeners=()) -> tuple[ExecutionGraph, PipelinedRegions]:
        """The execution graph with every vertex initialised, and its regions."""
        graph = ExecutionGraph(self.job, dynamic=self.dynamic)
        regions = PipelinedRegions(graph)
        graph.listeners += [regions, *listeners]
        graph.initialize(list(graph.job_vertices.values()))
        return graph, regions


class RecordingOperations:
    """SchedulerOperations that records each bulk and marks its subtasks scheduled;
    ``sizes`` are the bytes a vertex's subtasks are known to read (none by default)."""

    def __init__(self, sizes: dict[str, int] | None = None) -> None:
        self.bulks: list[list[str]] = []
        self.sizes = sizes or {}

    def bytes_per_task(self, vertex) -> int:
        return self.sizes.get(vertex.name, 0)

    def allocate_slots_and_deploy(self, vertices) -> None:
        self.bulks.append([v.label for v in vertices])
        for v in vertices:
            v.state = ExecutionState.SCHEDULED

    @property
    def deployed(self) -> list[str]:
        return [label for bulk in self.bulks for label in bulk]

    def clear(self) -> None:
        self.bulks.clear()


def finish(vertex: ExecutionVertex, location: str = "tm") -> None:
    """Mark a subtask finished the way the state does: its partitions become available."""
    vertex.state = ExecutionState.FINISHED
    for partition in vertex.produced:
        partition.mark_finished(location)
