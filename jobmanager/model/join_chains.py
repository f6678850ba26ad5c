"""A join that may run in the tasks of one side's producer, once the other side turned out small.

FLIP-470's best case: the side a join may broadcast finishes first and is small, while the other
side's producer has not started. Then the join needs no shuffle of that side at all: each task
of the producer (a scan, typically) reads the small side whole and joins its own rows as it
makes them, so the big side is never written or read back (Q3's fastest shape). The
JobManager decides this at run time (``core.scheduler.adaptive.join_chains``) and from then on
runs the producer and the join as one chained vertex, named as any chain, ``scan -> join``.

Which pairs could be chained is a property of the graph alone (``join_chain_candidates``), so
the JobManager's shell ships the chained vertex's code when it takes the job, under the name
the core will give it, and the core builds the same vertex (``fused_vertex``) when it decides.
A candidate is a marked shuffled join (``JoinInput``, the only non-broadcast inputs of a vertex
without sources, whose parallelism nobody set, not ``chain_start``) and a side whose producer
has no inputs and no other consumer and is no sink, where the join's kind lets the other side
be broadcast and nothing after the join relies on this side being hash-partitioned
(``JoinInput.redistributable``: each chained task joins whatever rows its scan made).
"""

from __future__ import annotations

from dataclasses import dataclass

from jobmanager.model.chaining import ChainedOperator, chain_name
from jobmanager.model.config import OPERATOR_CHAINING, joins_decided_at_run_time
from jobmanager.model.jobgraph import JobEdge, JobGraph, JobVertex, PartitionerKind
from jobmanager.model.sink import Sink

__all__ = [
    "FusedVertex",
    "JoinChain",
    "fuse_graph",
    "fused_vertex",
    "join_chain_candidates",
    "runnable_vertices",
]


@dataclass(frozen=True)
class JoinChain:
    """Join ``join``'s vertex ``consumer`` may run chained into ``producer``, its ``side``
    side's producer, once the other side (the result of edge ``other``: its producer may
    itself be fused and renamed meanwhile, its edge id stays) is broadcast."""

    join: str
    producer: str
    consumer: str
    side: str
    other: str


@dataclass(frozen=True)
class FusedVertex:
    """What the chained vertex is: its name, parallelism and limit, operator and sources."""

    name: str
    parallelism: int | None
    max_parallelism: int | None
    operator: ChainedOperator
    sources: tuple


def join_chain_candidates(graph: JobGraph, enabled: bool = True) -> tuple[JoinChain, ...]:
    """Every (join, side) of ``graph`` that could run chained (see the module); none when
    chaining is off (``pipeline.operator-chaining.enabled``)."""
    if not enabled:
        return ()
    found = []
    for vertex in graph.vertices:
        sides = _join_edges(vertex)
        if sides is None:
            continue
        for edge, other in (sides, sides[::-1]):
            if (
                other.join.may_be_broadcast
                and edge.join.redistributable
                and _chainable_producer(edge.source)
            ):
                found.append(
                    JoinChain(
                        edge.join.join, edge.source.name, vertex.name, edge.join.side, other.id
                    )
                )
    return tuple(found)


def runnable_vertices(graph: JobGraph, config) -> list[JobVertex]:
    """The vertices ``graph``'s tasks may run: its own, and each join chain that the
    JobManager may decide at run time (under the name it would give it), whose code is
    shipped when the job is taken. None of the latter unless joins are decided at run time
    (``table.optimizer.adaptive-broadcast-join.strategy`` is not NONE)."""
    vertices = graph.vertices
    if not joins_decided_at_run_time(config):
        return vertices
    names = {v.name for v in vertices}
    for chain in join_chain_candidates(graph, config[OPERATOR_CHAINING.key]):
        fused = fuse_graph(graph, chain.producer, chain.consumer)
        vertices.append(next(v for v in fused.vertices if v.name not in names))
    return vertices


def _hashed_join_side(edge: JobEdge) -> bool:
    """A side of a join, marked, whose rows are hashed to the join's tasks."""
    return (
        edge.join is not None
        and edge.partitioner is not None
        and edge.partitioner.kind is PartitionerKind.HASH
    )


def _join_edges(vertex: JobVertex) -> tuple[JobEdge, JobEdge] | None:
    """The vertex's two marked join edges, when they are its only non-broadcast inputs, both
    hashed sides of one join, and the vertex could take another's parallelism."""
    if not _may_take_parallelism(vertex):
        return None
    hashed = [e for e in vertex.inputs if not e.is_broadcast]
    if len(hashed) != 2 or not all(_hashed_join_side(e) for e in hashed):
        return None
    a, b = hashed
    if a.join.join != b.join.join or a.join.side == b.join.side:
        return None
    return a, b


def _may_take_parallelism(vertex: JobVertex) -> bool:
    """No sources, no parallelism of its own, not starting a chain, not feeding a chain."""
    if vertex.sources or vertex.parallelism is not None or vertex.chain_start:
        return False
    return not (isinstance(vertex.operator, ChainedOperator) and vertex.operator.feeds is not None)


def _chainable_producer(vertex: JobVertex) -> bool:
    operator = vertex.operator
    last = operator.operators[-1] if isinstance(operator, ChainedOperator) else operator
    return not vertex.inputs and len(vertex.outputs) == 1 and not isinstance(last, Sink)


def fused_vertex(producer: JobVertex, consumer: JobVertex) -> FusedVertex:
    """``producer`` and ``consumer`` as one chained vertex: the producer's sources and members
    first, reading the task's sources as before; then the consumer's, its first member reading
    the producer's result where it read the chained edge, and the consumer's other inputs
    (which become the chained vertex's inputs, after its sources, in the consumer's order)."""
    members = _members(producer)
    sources = len(producer.sources)
    feeds = [_feeds(producer.operator, k, sources) for k in range(len(members[0]))]
    kept = [e for e in consumer.inputs if e.source is not producer]
    first = tuple(
        None if e.source is producer else sources + kept.index(e) for e in consumer.inputs
    )
    names, operators = _members(consumer)
    feeds += [first, *[(None,)] * (len(names) - 1)]
    all_names = members[0] + names
    return FusedVertex(
        chain_name(all_names),
        producer.parallelism,
        producer.max_parallelism,
        ChainedOperator(all_names, members[1] + operators, feeds=tuple(feeds)),
        producer.sources,
    )


def fuse_graph(graph: JobGraph, producer: str, consumer: str) -> JobGraph:
    """``graph`` with ``producer`` and ``consumer`` one vertex (``fused_vertex``), in the
    consumer's place: the edge between them gone, every other edge kept with its id (the
    results the JobManager tracks are known by it), now ending at the fused vertex. A new
    graph: the one given may be another state's (a replay's, a test's)."""
    producer, consumer = graph.vertex(producer), graph.vertex(consumer)
    fused = fused_vertex(producer, consumer)
    result = JobGraph(graph.name)
    made: dict[str, JobVertex] = {}
    for vertex in graph.vertices:
        if vertex is consumer:
            made[producer.name] = made[consumer.name] = result.add_vertex(
                fused.name, fused.parallelism, fused.max_parallelism, fused.operator, fused.sources
            )
        elif vertex is not producer:
            made[vertex.name] = result.add_vertex_like(vertex)
    for edge in graph.edges:
        if edge.source is producer and edge.target is consumer:
            continue
        result.connect_like(edge, made[edge.source.name], made[edge.target.name], edge.id)
    return result


def _members(vertex: JobVertex) -> tuple[tuple[str, ...], tuple]:
    if isinstance(vertex.operator, ChainedOperator):
        return vertex.operator.names, vertex.operator.operators
    return (vertex.name,), (vertex.operator,)


def _feeds(operator, position: int, sources: int) -> tuple[int | None, ...]:
    if isinstance(operator, ChainedOperator):
        return operator.member_feeds(position, sources)
    return tuple(range(sources))
