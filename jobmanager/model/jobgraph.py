"""The job model: a DAG of job vertices joined by edges.

A vertex may fix its parallelism; most leave it unset so the adaptive scheduler decides it from
the bytes its inputs produced. Each edge states how its data is distributed (pointwise or
all-to-all), what kind of result partition carries it (blocking or pipelined) and how records are
partitioned. Every edge produces its own intermediate result, so the edge's id is the result id.
"""

from __future__ import annotations

from typing import Any

from jobmanager.errors import (
    CyclicGraphError,
    DuplicateNameError,
    InvalidEdgeError,
    InvalidParallelismError,
    JobGraphError,
)
from jobmanager.model.inference import (
    DynamicParallelismInference,
    PlanningSource,
    StaticParallelismInference,
)
from jobmanager.model.joins import JoinInput
from jobmanager.model.partitioners import (
    DistributionPattern,
    Partitioner,
    PartitionerKind,
    ResultPartitionType,
)
from shuffle.keyorder import SortKey

__all__ = [
    "DistributionPattern",
    "JobEdge",
    "JobGraph",
    "JobVertex",
    "Partitioner",
    "PartitionerKind",
    "ResultPartitionType",
    "SortKey",
]


class JobVertex:
    """One operator of the job. Its subtasks are its parallel instances.

    ``operator`` is what the vertex runs (a PySpark or Arrow function, a sink) and ``sources``
    the data sources it reads directly; the scheduling core never calls into either. What it
    needs from the sources is settled when the vertex is built: a static parallelism one of them
    knows, and whether any can infer one at run time (FLIP-379).
    """

    __slots__ = (
        "graph",
        "name",
        "parallelism",
        "max_parallelism",
        "operator",
        "sources",
        "static_parallelism",
        "infers_parallelism",
        "inputs",
        "outputs",
        "chain_start",
    )

    def __init__(
        self,
        graph: JobGraph,
        name: str,
        parallelism: int | None,
        max_parallelism: int | None,
        operator: Any,
        sources: tuple = (),
        chain_start: bool = False,
    ) -> None:
        _check_parallelism(name, parallelism, max_parallelism)
        self.graph = graph
        self.name = name
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism
        self.operator = operator
        self.sources = tuple(sources)
        self.chain_start = chain_start  # never chained to its producer (Flink's startNewChain)
        self.static_parallelism = _static_parallelism(self.sources)
        self.infers_parallelism = any(
            isinstance(s, (DynamicParallelismInference, PlanningSource)) for s in self.sources
        )
        self.inputs: list[JobEdge] = []
        self.outputs: list[JobEdge] = []

    @property
    def is_source(self) -> bool:
        return not self.inputs

    def __repr__(self) -> str:
        p = self.parallelism if self.parallelism is not None else "auto"
        return f"JobVertex({self.name!r}, parallelism={p})"


class JobEdge:
    """A data exchange from ``source`` to ``target``; it produces the intermediate result ``id``.

    ``partitioner`` None means the user left it open: a static job makes it FORWARD when both
    ends have the same parallelism and REBALANCE otherwise; the adaptive scheduler makes it
    RESCALE, so a vertex's parallelism follows its data rather than its producer (FLIP-187).

    ``splittable``: a skewed subpartition of this input may be cut across several consumers,
    each reading the matching data of the vertex's other inputs whole (right for the probe side
    of an inner join). ``dynamic_filtering`` names a partition column of the target vertex's
    sources: the producer reports which values of it survived, and the target's sources read
    only those partitions. ``join``: the side of a join this edge is (``JoinInput``).
    ``pre_aggregated``: the producer aggregated what it sends, so it sends at most a row per
    group of what it read (a partial aggregate, the first of Flink's two phases, to its final
    one; or a final aggregate to the sort of its groups): a producer run as one task has too
    little for a second consumer task, and the consumer runs in that task
    (``jobmanager.model.chaining``).
    """

    __slots__ = (
        "id",
        "source",
        "target",
        "result_type",
        "partitioner",
        "pattern",
        "splittable",
        "dynamic_filtering",
        "join",
        "pre_aggregated",
    )

    def __init__(
        self,
        id: str,
        source: JobVertex,
        target: JobVertex,
        result_type: ResultPartitionType,
        partitioner: Partitioner | None,
        pattern: DistributionPattern | None,
        splittable: bool = False,
        dynamic_filtering: str | None = None,
        join: JoinInput | None = None,
        pre_aggregated: bool = False,
    ) -> None:
        self.id = id
        self.source = source
        self.target = target
        self.result_type = result_type
        self.partitioner = partitioner
        self.pattern = pattern
        self.splittable = splittable
        self.dynamic_filtering = dynamic_filtering
        self.join = join
        self.pre_aggregated = pre_aggregated

    def __setstate__(self, state) -> None:
        """Unpickle, also a graph pickled before an attribute existed (an archived job's graph,
        read back by ``tidal report`` or a JobManager taking the job over): what it lacks
        takes the default."""
        self.splittable, self.dynamic_filtering, self.join = False, None, None
        self.pre_aggregated = False
        _, slots = state if isinstance(state, tuple) else (None, state)
        for name, value in (slots or {}).items():
            setattr(self, name, value)

    def resolved(self, adaptive: bool) -> JobEdge:
        """This edge with an open partitioner and pattern settled as the scheduler runs it."""
        partitioner = self.partitioner
        if partitioner is None:
            if adaptive:
                partitioner = Partitioner.RESCALE
            elif self.source.parallelism == self.target.parallelism:
                partitioner = Partitioner.FORWARD
            else:
                partitioner = Partitioner.REBALANCE
        pattern = self.pattern or partitioner.distribution_pattern
        return JobEdge(
            self.id,
            self.source,
            self.target,
            self.result_type,
            partitioner,
            pattern,
            self.splittable,
            self.dynamic_filtering,
            self.join,
            self.pre_aggregated,
        )

    @property
    def distribution_pattern(self) -> DistributionPattern:
        if self.pattern is not None:
            return self.pattern
        if self.partitioner is not None:
            return self.partitioner.distribution_pattern
        raise JobGraphError(f"edge {self.id!r}: the partitioner is not resolved yet")

    @property
    def is_broadcast(self) -> bool:
        return self.partitioner is not None and self.partitioner.is_broadcast

    @property
    def is_forward(self) -> bool:
        return self.partitioner is not None and self.partitioner.kind is PartitionerKind.FORWARD

    def __repr__(self) -> str:
        return (
            f"JobEdge({self.id!r}, {self.result_type.label}, {self.partitioner or 'unspecified'})"
        )


class JobGraph:
    """A named DAG of job vertices. Build it with ``add_vertex`` and ``connect``."""

    def __init__(self, name: str = "job") -> None:
        self.name = name
        self._vertices: dict[str, JobVertex] = {}
        self._edges: dict[str, JobEdge] = {}

    def add_vertex(
        self,
        name: str,
        parallelism: int | None = None,
        max_parallelism: int | None = None,
        operator: Any = None,
        sources: tuple | list = (),
        chain_start: bool = False,
    ) -> JobVertex:
        """``chain_start``: run this vertex as its own task, never chained to its producer
        (``jobmanager.model.chaining``)."""
        if name in self._vertices:
            raise DuplicateNameError(f"job graph {self.name!r} already has a vertex named {name!r}")
        vertex = JobVertex(
            self, name, parallelism, max_parallelism, operator, tuple(sources), chain_start
        )
        self._vertices[name] = vertex
        return vertex

    def add_vertex_like(self, vertex: JobVertex) -> JobVertex:
        """A vertex as ``vertex`` of another graph is: its name, parallelisms, operator, sources
        and chain start."""
        return self.add_vertex(
            vertex.name,
            vertex.parallelism,
            vertex.max_parallelism,
            vertex.operator,
            vertex.sources,
            vertex.chain_start,
        )

    def connect_like(
        self, edge: JobEdge, source: JobVertex, target: JobVertex, edge_id: str | None = None
    ) -> JobEdge:
        """An edge as ``edge`` of another graph is, between ``source`` and ``target`` of this
        one; its id as ``connect`` gives it unless ``edge_id`` does."""
        return self.connect(
            source,
            target,
            edge.partitioner,
            edge.result_type,
            edge.pattern,
            edge.splittable,
            edge.dynamic_filtering,
            edge.join,
            edge_id=edge_id,
            pre_aggregated=edge.pre_aggregated,
        )

    def connect(
        self,
        source: JobVertex,
        target: JobVertex,
        partitioner: Partitioner | None = None,
        result_type: ResultPartitionType = ResultPartitionType.BLOCKING,
        pattern: DistributionPattern | None = None,
        splittable: bool = False,
        dynamic_filtering: str | None = None,
        join: JoinInput | None = None,
        edge_id: str | None = None,
        pre_aggregated: bool = False,
    ) -> JobEdge:
        """Add an edge; its id names both ends, e.g. ``"orders->join"`` (``#2`` for a second one),
        unless ``edge_id`` gives it (an edge carried over into a graph whose vertices changed
        keeps the id its results are known by)."""
        if edge_id is None:
            edge_id = f"{source.name}->{target.name}"
            n = 2
            while edge_id in self._edges:
                edge_id = f"{source.name}->{target.name}#{n}"
                n += 1
        elif edge_id in self._edges:
            raise InvalidEdgeError(f"job graph {self.name!r} already has an edge {edge_id!r}")
        for end in (source, target):
            if end.graph is not self or self._vertices.get(end.name) is not end:
                raise InvalidEdgeError(
                    f"edge {edge_id!r}: vertex {end.name!r} belongs to job graph "
                    f"{end.graph.name!r}, not to {self.name!r}"
                )
        if partitioner is not None and pattern is not None:
            if partitioner.distribution_pattern is not pattern:
                raise InvalidEdgeError(
                    f"edge {edge_id!r}: partitioner {partitioner} is "
                    f"{partitioner.distribution_pattern.value}, but the edge says {pattern.value}"
                )
        edge = JobEdge(
            edge_id,
            source,
            target,
            result_type,
            partitioner,
            pattern,
            splittable,
            dynamic_filtering,
            join,
            pre_aggregated,
        )
        self._edges[edge_id] = edge
        source.outputs.append(edge)
        target.inputs.append(edge)
        return edge

    @property
    def vertices(self) -> list[JobVertex]:
        return list(self._vertices.values())

    @property
    def edges(self) -> list[JobEdge]:
        return list(self._edges.values())

    def edge(self, edge_id: str) -> JobEdge:
        return self._edges[edge_id]

    def vertex(self, name: str) -> JobVertex:
        try:
            return self._vertices[name]
        except KeyError:
            raise JobGraphError(f"job graph {self.name!r} has no vertex named {name!r}") from None

    @property
    def is_dynamic(self) -> bool:
        """True when some vertex leaves its parallelism to the adaptive scheduler."""
        return any(v.parallelism is None for v in self._vertices.values())

    def topological_order(self) -> list[JobVertex]:
        """Vertices with every producer before its consumers; ties keep insertion order."""
        indegree = {name: len(v.inputs) for name, v in self._vertices.items()}
        ready = [v for v in self._vertices.values() if indegree[v.name] == 0]
        order: list[JobVertex] = []
        while ready:
            vertex = ready.pop(0)
            order.append(vertex)
            for edge in vertex.outputs:
                indegree[edge.target.name] -= 1
                if indegree[edge.target.name] == 0:
                    ready.append(edge.target)
        if len(order) < len(self._vertices):
            raise CyclicGraphError(self._find_cycle({v.name for v in order}))
        return order

    def _find_cycle(self, acyclic: set[str]) -> list[str]:
        """Walk producers from a vertex left over by Kahn's algorithm until one repeats."""
        start = next(name for name in self._vertices if name not in acyclic)
        path: list[str] = []
        seen: dict[str, int] = {}
        current = self._vertices[start]
        while current.name not in seen:
            seen[current.name] = len(path)
            path.append(current.name)
            current = next(e.source for e in current.inputs if e.source.name not in acyclic)
        cycle = path[seen[current.name] :] + [current.name]
        return list(reversed(cycle))

    def validate(self) -> None:
        """Raise a JobGraphError naming the culprit if the graph cannot run."""
        if not self._vertices:
            raise JobGraphError(f"job graph {self.name!r} has no vertices")
        self.topological_order()
        for edge in self._edges.values():
            partitioner = edge.partitioner
            if partitioner is None or partitioner.kind is not PartitionerKind.FORWARD:
                continue
            p, q = edge.source.parallelism, edge.target.parallelism
            if p is not None and q is not None and p != q:
                raise InvalidEdgeError(
                    f"edge {edge.id!r}: FORWARD needs equal parallelisms, but "
                    f"{edge.source.name!r} has {p} and {edge.target.name!r} has {q}"
                )

    def __repr__(self) -> str:
        return f"JobGraph({self.name!r}, {len(self._vertices)} vertices, {len(self._edges)} edges)"


def _check_parallelism(name: str, parallelism: int | None, max_parallelism: int | None) -> None:
    if parallelism is not None and parallelism < 1:
        raise InvalidParallelismError(
            f"vertex {name!r}: parallelism must be at least 1, got {parallelism}"
        )
    if max_parallelism is not None and max_parallelism < 1:
        raise InvalidParallelismError(
            f"vertex {name!r}: max parallelism must be at least 1, got {max_parallelism}"
        )
    if parallelism is not None and max_parallelism is not None and max_parallelism < parallelism:
        raise InvalidParallelismError(
            f"vertex {name!r}: max parallelism {max_parallelism} is below "
            f"its parallelism {parallelism}"
        )


def _static_parallelism(sources: tuple) -> int | None:
    """The largest parallelism the vertex's sources fix statically, if any does."""
    static = [s.static_parallelism() for s in sources if isinstance(s, StaticParallelismInference)]
    known = [p for p in static if p is not None and p > 0]
    return max(known) if known else None
