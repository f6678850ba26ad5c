"""ExecutionJobVertex (a job vertex at run time) and ExecutionVertex (one of its subtasks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobmanager.core.executiongraph.states import ExecutionState
from jobmanager.model.jobgraph import JobVertex

if TYPE_CHECKING:
    from jobmanager.core.executiongraph.groups import ConsumedPartitionGroup
    from jobmanager.core.executiongraph.inputs import JobVertexInputInfo
    from jobmanager.core.executiongraph.partition import (
        IntermediateResult,
        IntermediateResultPartition,
    )

__all__ = ["ExecutionJobVertex", "ExecutionVertex"]


class ExecutionJobVertex:
    """A job vertex in the execution graph.

    It is registered when the graph is built and *initialised* later, once its parallelism is
    known and all its producers are initialised; only then does it have subtasks.
    """

    __slots__ = (
        "job_vertex",
        "position",
        "parallelism",
        "max_parallelism",
        "vertices",
        "inputs",
        "outputs",
        "input_infos",
        "unfinished",
    )

    def __init__(self, job_vertex: JobVertex, position: int, max_parallelism: int) -> None:
        self.job_vertex = job_vertex
        self.position = position
        self.parallelism: int | None = job_vertex.parallelism
        self.max_parallelism = max_parallelism
        self.vertices: list[ExecutionVertex] = []
        self.inputs: list[IntermediateResult] = []
        self.outputs: list[IntermediateResult] = []
        self.input_infos: dict[str, JobVertexInputInfo] = {}
        self.unfinished = 0

    @property
    def name(self) -> str:
        return self.job_vertex.name

    @property
    def is_initialized(self) -> bool:
        return bool(self.vertices)

    @property
    def is_finished(self) -> bool:
        return self.is_initialized and self.unfinished == 0

    @property
    def producers(self) -> list[ExecutionJobVertex]:
        return [result.producer for result in self.inputs]

    def __repr__(self) -> str:
        return f"ExecutionJobVertex({self.name!r}, parallelism={self.parallelism})"


class ExecutionVertex:
    """One subtask of a job vertex, with the state of its current attempt.

    ``index`` is its position in the graph's topological order of all subtasks; regions and
    strategies sort by it. ``consumed_groups`` and ``produced`` are tuples that identical
    subtasks share, which keeps a 10,000-wide vertex small.
    """

    __slots__ = (
        "job_vertex",
        "subtask",
        "index",
        "state",
        "attempt",
        "produced",
        "consumed_groups",
        "region",
        "slot",
    )

    def __init__(self, job_vertex: ExecutionJobVertex, subtask: int, index: int) -> None:
        self.job_vertex = job_vertex
        self.subtask = subtask
        self.index = index
        self.state = ExecutionState.CREATED
        self.attempt = 0
        self.produced: tuple[IntermediateResultPartition, ...] = ()
        self.consumed_groups: tuple[ConsumedPartitionGroup, ...] = ()
        self.region = None
        self.slot = None

    @property
    def name(self) -> str:
        return self.job_vertex.job_vertex.name

    @property
    def label(self) -> str:
        return f"{self.name}[{self.subtask}]"

    def __repr__(self) -> str:
        return f"ExecutionVertex({self.label}, attempt {self.attempt}, {self.state.value})"
