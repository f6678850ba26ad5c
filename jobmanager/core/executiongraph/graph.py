"""The execution graph: job vertices registered up front, initialised as their parallelism
becomes known, with listeners told which subtasks were added."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping, Protocol

from jobmanager.core.executiongraph.edges import connect_to_result
from jobmanager.core.executiongraph.inputs import FormulaInputInfo, JobVertexInputInfo
from jobmanager.core.executiongraph.partition import IntermediateResult
from jobmanager.core.executiongraph.states import TransitionLog
from jobmanager.core.executiongraph.vertex import ExecutionJobVertex, ExecutionVertex
from jobmanager.errors import JobGraphError
from jobmanager.model.jobgraph import JobGraph

__all__ = ["ExecutionGraph", "TopologyListener", "TopologyUpdate"]


@dataclass(frozen=True, slots=True)
class TopologyUpdate:
    """What one growth of the graph added: the job vertices initialised and their subtasks."""

    graph: ExecutionGraph
    new_job_vertices: list[ExecutionJobVertex]
    new_vertices: list[ExecutionVertex]


class TopologyListener(Protocol):
    """Told, in registration order, each time the graph grows."""

    def on_topology_updated(self, update: TopologyUpdate) -> None: ...


class ExecutionGraph:
    """Every job vertex of the job, and the subtasks of those initialised so far.

    A static graph (every parallelism known, or ``default_parallelism`` where unset) initialises
    all vertices at once through the same path a dynamic graph uses one vertex at a time. ``dynamic`` decides how producers size their
    partitions: for the consumer's parallelism, or for its max parallelism when that is unknown.
    """

    def __init__(
        self,
        job_graph: JobGraph,
        dynamic: bool,
        default_parallelism: int = 1,
        default_max_parallelism: int = 128,
    ) -> None:
        job_graph.validate()
        self.job_graph = job_graph
        self.dynamic = dynamic
        self.job_vertices: dict[str, ExecutionJobVertex] = {}
        for position, jv in enumerate(job_graph.topological_order()):
            max_parallelism = jv.max_parallelism or jv.parallelism or default_max_parallelism
            ejv = ExecutionJobVertex(jv, position, max_parallelism)
            if ejv.parallelism is None and not dynamic:
                ejv.parallelism = min(default_parallelism, max_parallelism)
            self.job_vertices[jv.name] = ejv
        self.results: dict[str, IntermediateResult] = {}
        for edge in job_graph.edges:
            producer = self.job_vertices[edge.source.name]
            consumer = self.job_vertices[edge.target.name]
            result = IntermediateResult(edge.resolved(adaptive=dynamic), producer, consumer)
            self.results[edge.id] = result
            producer.outputs.append(result)
            consumer.inputs.append(result)
        self.listeners: list[TopologyListener] = []
        self.transitions = TransitionLog()
        self.unfinished_job_vertices = len(self.job_vertices)
        self.growth_steps: list[tuple] = []
        self._vertex_count = 0
        self._group_count = 0

    def job_vertex(self, name: str) -> ExecutionJobVertex:
        try:
            return self.job_vertices[name]
        except KeyError:
            raise JobGraphError(f"the job has no vertex named {name!r}") from None

    def vertex(self, name: str, subtask: int) -> ExecutionVertex:
        return self.job_vertex(name).vertices[subtask]

    def vertices(self) -> Iterator[ExecutionVertex]:
        for ejv in self.job_vertices.values():
            yield from ejv.vertices

    @property
    def num_vertices(self) -> int:
        return self._vertex_count

    @property
    def is_finished(self) -> bool:
        return self.unfinished_job_vertices == 0

    def can_initialize(self, ejv: ExecutionJobVertex) -> bool:
        return (
            not ejv.is_initialized
            and ejv.parallelism is not None
            and all(p.is_initialized for p in ejv.producers)
        )

    def initialize(
        self,
        job_vertices: list[ExecutionJobVertex],
        input_infos: Mapping[str, Mapping[str, JobVertexInputInfo]] | None = None,
    ) -> list[ExecutionVertex]:
        """Create the subtasks of ``job_vertices`` (given in topological order), connect them to
        their producers, and tell the listeners. ``input_infos[vertex][result]`` overrides the
        static mapping of an input, as the adaptive scheduler's decisions do.

        Each call is remembered in ``growth_steps`` with every job vertex's parallelism at that
        moment (a producer sizes its partitions by whether its consumer's is known yet), so a
        snapshot can grow the same graph again, step by step."""
        self.growth_steps.append(
            (
                tuple(ejv.name for ejv in job_vertices),
                tuple(ejv.parallelism for ejv in self.job_vertices.values()),
                tuple((name, tuple(infos.items())) for name, infos in (input_infos or {}).items()),
            )
        )
        new_vertices: list[ExecutionVertex] = []
        for ejv in job_vertices:
            if not self.can_initialize(ejv):
                raise JobGraphError(
                    f"vertex {ejv.name!r} cannot be initialised yet: it needs a parallelism and "
                    "initialised producers"
                )
            new_vertices.extend(self._initialize_one(ejv, (input_infos or {}).get(ejv.name, {})))
        update = TopologyUpdate(self, job_vertices, new_vertices)
        for listener in self.listeners:
            listener.on_topology_updated(update)
        return new_vertices

    def _initialize_one(
        self, ejv: ExecutionJobVertex, infos: Mapping[str, JobVertexInputInfo]
    ) -> list[ExecutionVertex]:
        first = self._vertex_count
        ejv.vertices = [ExecutionVertex(ejv, i, first + i) for i in range(ejv.parallelism)]
        self._vertex_count += ejv.parallelism
        ejv.unfinished = ejv.parallelism
        for result in ejv.outputs:
            result.create_partitions(self.dynamic)
        for result in ejv.inputs:
            info = infos.get(result.id) or FormulaInputInfo(
                result.pattern,
                result.is_broadcast,
                len(result.partitions),
                ejv.parallelism,
                result.subpartition_count,
            )
            ejv.input_infos[result.id] = info
            connect_to_result(ejv, result, info, self._next_group_id)
        return ejv.vertices

    def fuse(self, producer: str, consumer: str, job_graph: JobGraph) -> ExecutionJobVertex:
        """Run ``producer`` and ``consumer``, neither initialised, as the one vertex that
        ``job_graph`` (this graph's job graph with the two fused, ``model.join_chains``) puts
        in the consumer's place; every other vertex and result keeps its name and id. The
        step is remembered in ``growth_steps`` (as ``("fuse", producer, consumer)``) so a
        snapshot grows the same graph again."""
        old_producer, old_consumer = self.job_vertex(producer), self.job_vertex(consumer)
        if old_producer.is_initialized or old_consumer.is_initialized:
            raise JobGraphError(
                f"vertices {producer!r} and {consumer!r} can be fused only "
                "before either is initialised"
            )
        self.growth_steps.append(("fuse", producer, consumer))
        fused = next(v for v in job_graph.vertices if v.name not in self.job_vertices)
        ejv = ExecutionJobVertex(fused, old_consumer.position, old_producer.max_parallelism)
        ejv.parallelism = old_producer.parallelism
        self._rewire(ejv, old_producer, old_consumer)
        self.job_vertices = _fused_in(self.job_vertices, producer, consumer, ejv)
        for name, v in self.job_vertices.items():
            v.job_vertex = job_graph.vertex(name)
        for result in self.results.values():
            result.edge = job_graph.edge(result.id).resolved(adaptive=self.dynamic)
        self.job_graph = job_graph
        self.unfinished_job_vertices -= 1
        return ejv

    def _rewire(self, ejv, old_producer, old_consumer) -> None:
        """The fused vertex reads the producer's inputs and the consumer's others, and writes
        the consumer's outputs; the results between the two are gone."""
        between = [r for r in old_consumer.inputs if r.producer is old_producer]
        ejv.inputs = old_producer.inputs + [r for r in old_consumer.inputs if r not in between]
        ejv.outputs = old_consumer.outputs
        for result in ejv.inputs:
            result.consumer = ejv
        for result in ejv.outputs:
            result.producer = ejv
        for result in between:
            del self.results[result.id]

    def _next_group_id(self) -> int:
        self._group_count += 1
        return self._group_count - 1

    def __repr__(self) -> str:
        initialized = sum(1 for v in self.job_vertices.values() if v.is_initialized)
        return (
            f"ExecutionGraph({self.job_graph.name!r}, {initialized}/{len(self.job_vertices)} "
            f"job vertices initialised, {self._vertex_count} subtasks)"
        )


def _fused_in(job_vertices: dict, producer: str, consumer: str, fused) -> dict:
    """The vertices by name, in their order, the fused vertex in the consumer's place and the
    producer gone."""
    return {
        (fused.name if name == consumer else name): (fused if name == consumer else v)
        for name, v in job_vertices.items()
        if name != producer
    }
