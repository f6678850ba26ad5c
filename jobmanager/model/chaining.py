"""Operator chaining, as Flink does it: vertices joined by a FORWARD edge run as one task.

An edge chains when it is FORWARD (so both ends have the same parallelism: equal fixed ones,
or one forward group's decided one), its producer has no other consumer, its consumer no other
input (no second edge, no source of its own), the consumer is not marked ``chain_start``
(Flink's ``startNewChain``), the producer is not a sink, and chaining is on
(``pipeline.operator-chaining.enabled``, Flink's key, on by default). A chain runs as one task
with no partition file inside it: its PySpark functions compose into one Spark query, its
Arrow functions hand the table on in memory, a sink at its end writes the chain's result.

Unlike Flink, an edge of another partitioner (hash, rebalance, rescale; never broadcast) also
chains when both its ends run as one task: one producer task sends everything to one consumer
task, which is what FORWARD does, as Spark plans no exchange below a one-partition input. A
vertex runs as one task when the user set its parallelism to 1, or when it is a source vertex
whose sources, asked when the JobManager takes the job, infer 1 (``one_task_candidates``: only
those whose one edge would chain, so no other job's sources are listed any earlier). A source
of a few megabytes whose result goes to a one-task aggregate thus becomes one Spark query. A
vertex with sources whose inputs are all broadcast counts as a source vertex here when the
least parallelism is 1: broadcast bytes are not counted, so its inputs ask for that least
parallelism and its sources decide (a broadcast join on the scan's side, then the final
aggregate, is one Spark query). And a consumer whose parallelism nobody set runs in its
producer's one task when what it reads was pre-aggregated (``JobEdge.pre_aggregated``: an
aggregate's rows, at most one per group of what that task read): a planned query's final
aggregate then runs with its scan and partial aggregate in one Spark query, as Spark alone
runs both phases, and so does an ORDER BY's sort of its groups, each not a task of its own
whose Spark query plans, compiles and reads a few rows (TPC-H Q1's first run on a fresh
cluster 0.5 s shorter, 11.26 against 11.78 s, medians of six alternating runs). Its
parallelism is then not decided from its bytes; with a least parallelism above 1
(``execution.batch.adaptive.auto-parallelism.min-parallelism``) it is.

The JobManager decides the chains when it takes the job and records them in the job's first
event (``JobSubmitted.chains``, with the inferences they rest on in ``JobSubmitted.inferred``),
so a replay rebuilds the same graph without deciding again; the scheduler, the job's status,
``tidal explain`` and the report see one vertex per chain, named as Flink names it, ``a -> b``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import AbstractSet, Any

from jobmanager.model.jobgraph import JobGraph, JobVertex, PartitionerKind
from jobmanager.model.sink import Sink

__all__ = [
    "ChainedOperator",
    "chain_name",
    "chained_graph",
    "decide_chains",
    "one_task_candidates",
]


@dataclass(frozen=True)
class ChainedOperator:
    """The operators of a chain's vertices, in order (None: a vertex passing its input on);
    ``fixed_by``: the member whose parallelism the user set, which the chain runs with (an
    explanation names it: the other members' were not set). ``feeds``: what each member reads,
    when not just the first member every input of the task and each later one the result
    before it: per member, the task's inputs by position (its sources, then its incoming
    edges) and None for the result of the member before (a join chained into one side's
    producer reads that result and the broadcast side, ``jobmanager.model.join_chains``)."""

    names: tuple[str, ...]
    operators: tuple[Any, ...]
    fixed_by: str | None = None
    feeds: tuple[tuple[int | None, ...], ...] | None = None

    def member_feeds(self, position: int, inputs: int) -> tuple[int | None, ...]:
        """What member ``position`` reads, of a task with ``inputs`` inputs."""
        if self.feeds is not None:
            return self.feeds[position]
        return tuple(range(inputs)) if position == 0 else (None,)

    def __str__(self) -> str:
        return " -> ".join(str(op) if op is not None else "pass-through" for op in self.operators)

    @property
    def first(self) -> Any:
        """The first operator that does something (pass-throughs before it change nothing):
        what the chain's input is read for."""
        return next((op for op in self.operators if op is not None), None)

    @property
    def sink(self) -> Sink | None:
        last = self.operators[-1]
        return last if isinstance(last, Sink) else None


def chain_name(names: Sequence[str]) -> str:
    return " -> ".join(names)


def _single_consumer(vertex: JobVertex) -> JobVertex | None:
    """The vertex's one consumer, if it could chain to it: one edge out of a vertex that is no
    sink, into a vertex with no other input, no sources and no ``chain_start``."""
    if len(vertex.outputs) != 1 or isinstance(vertex.operator, Sink):
        return None
    target = vertex.outputs[0].target
    if len(target.inputs) != 1 or target.sources or target.chain_start:
        return None
    return target


def _kind(vertex: JobVertex) -> PartitionerKind | None:
    return _kind_of(vertex.outputs[0])


def _chains_to_next(vertex: JobVertex, one_task: AbstractSet[str]) -> JobVertex | None:
    target = _single_consumer(vertex)
    if target is None:
        return None
    kind = _kind(vertex)
    if kind is PartitionerKind.FORWARD:
        return target
    if (
        kind is not PartitionerKind.BROADCAST
        and _runs_as_one_task(vertex, one_task)
        and _runs_as_one_task(target, one_task)
    ):
        return target
    return None


def _runs_as_one_task(vertex: JobVertex, one_task: AbstractSet[str]) -> bool:
    return vertex.parallelism == 1 or vertex.name in one_task


def _follows_its_producer(vertex: JobVertex, min_parallelism: int) -> bool:
    """Whether ``vertex`` runs in its producer's task when that is one task: nothing set, one
    input, pre-aggregated (``JobEdge.pre_aggregated``), an edge that would chain, and a least
    parallelism of 1 (more would be asked for otherwise)."""
    if vertex.parallelism is not None or min_parallelism > 1 or len(vertex.inputs) != 1:
        return False
    edge = vertex.inputs[0]
    return (
        edge.pre_aggregated
        and _kind_of(edge) is not PartitionerKind.BROADCAST
        and _single_consumer(edge.source) is vertex
    )


def _infers_at_run_time(vertex: JobVertex, min_parallelism: int) -> bool:
    """A vertex whose parallelism its sources alone infer, once the job is taken."""
    return (
        _sources_decide(vertex, min_parallelism)
        and vertex.parallelism is None
        and vertex.infers_parallelism
        and vertex.static_parallelism is None
    )


def one_task_candidates(
    graph: JobGraph, enabled: bool = True, min_parallelism: int = 1
) -> tuple[str, ...]:
    """Source vertices whose one edge chains exactly when they run as one task: no parallelism
    set, sources that infer theirs at run time, an edge that is not FORWARD (a forward group
    gives the source its consumer's parallelism) nor BROADCAST, into a consumer set to one
    task or following its producer into one (``_follows_its_producer``), directly or past a
    chain of FORWARD edges (a planned query's scan, its partial aggregate, then the final one);
    no inputs, or, with a ``min_parallelism`` of 1, only broadcast inputs that filter nothing
    (their values would reach the sources only once the producers ran). Their sources are
    asked when the job is taken, so the chain can be decided then."""
    if not enabled:
        return ()
    found = []
    for vertex in graph.vertices:
        if not _infers_at_run_time(vertex, min_parallelism):
            continue
        tail, target = _past_forward_edges(vertex)
        if target is None or _kind(tail) is PartitionerKind.BROADCAST:
            continue
        if target.parallelism == 1 or _follows_its_producer(target, min_parallelism):
            found.append(vertex.name)
    return tuple(found)


def _past_forward_edges(vertex: JobVertex) -> tuple[JobVertex, JobVertex | None]:
    """The last vertex of the chain of FORWARD edges starting at ``vertex`` (each consumer the
    producer's one, as chaining needs), and the consumer its own one edge leads to (None if
    that edge could not chain: a second consumer, or a consumer with other inputs)."""
    current = vertex
    while True:
        target = _single_consumer(current)
        if target is None or _kind(current) is not PartitionerKind.FORWARD:
            return current, target
        current = target


def _one_task(graph: JobGraph, known: AbstractSet[str], min_parallelism: int) -> frozenset[str]:
    """``known`` with every vertex reading one of them through a FORWARD edge (a forward
    group has one parallelism: a scan inferred to one task makes its partial aggregate one),
    and every consumer that runs in such a task (``_follows_its_producer``: the final
    aggregate after it)."""
    one = set(known)
    for vertex in graph.topological_order():
        if any(edge.is_forward and edge.source.name in one for edge in vertex.inputs) or (
            _follows_its_producer(vertex, min_parallelism)
            and _runs_as_one_task(vertex.inputs[0].source, one)
        ):
            one.add(vertex.name)
    return frozenset(one)


def _sources_decide(vertex: JobVertex, min_parallelism: int) -> bool:
    """Whether the vertex's parallelism is what its sources infer, known before its inputs
    ran: it has none, or only broadcast ones (counted as no bytes) and a least parallelism
    of 1."""
    if not vertex.inputs:
        return True
    return min_parallelism <= 1 and all(
        _kind_of(edge) is PartitionerKind.BROADCAST and not edge.dynamic_filtering
        for edge in vertex.inputs
    )


def _kind_of(edge) -> PartitionerKind | None:
    return edge.partitioner.kind if edge.partitioner is not None else None


def decide_chains(
    graph: JobGraph,
    enabled: bool = True,
    one_task: AbstractSet[str] = frozenset(),
    min_parallelism: int = 1,
) -> tuple[tuple[str, ...], ...]:
    """The chains of two or more vertices, each in data order, heads in graph order.
    ``one_task``: vertices known to run as one task besides those set to 1 (sources inferred
    so when the job was taken); ``min_parallelism``: the least a decided vertex gets."""
    if not enabled:
        return ()
    one_task = _one_task(graph, one_task, min_parallelism)
    chained_to: dict[str, str] = {}
    for vertex in graph.vertices:
        target = _chains_to_next(vertex, one_task)
        if target is not None:
            chained_to[vertex.name] = target.name
    heads = [
        v.name for v in graph.vertices if v.name in chained_to and v.name not in chained_to.values()
    ]
    chains = []
    for head in heads:
        names = [head]
        while names[-1] in chained_to:
            names.append(chained_to[names[-1]])
        chains.append(tuple(names))
    return tuple(chains)


def _chained_vertices(
    graph: JobGraph, result: JobGraph, member_of: dict[str, tuple[str, ...]]
) -> dict[tuple[str, ...], JobVertex]:
    """Add to ``result`` each vertex outside a chain as it is and each chain as one vertex
    (at its head's place); each by its chain (a vertex alone: a chain of one)."""
    made: dict[tuple[str, ...], JobVertex] = {}
    for vertex in graph.vertices:
        chain = member_of.get(vertex.name)
        if chain is None:
            made[(vertex.name,)] = result.add_vertex_like(vertex)
        elif vertex.name == chain[0]:
            made[chain] = _add_chain(result, [graph.vertex(name) for name in chain])
    return made


def chained_graph(graph: JobGraph, chains: Sequence[Sequence[str]]) -> JobGraph:
    """``graph`` with each chain one vertex: the head's sources and inputs, the tail's outputs,
    the members' operators in order. Without chains, ``graph`` itself."""
    if not chains:
        return graph
    member_of = {name: tuple(chain) for chain in chains for name in chain}
    result = JobGraph(graph.name)
    made = _chained_vertices(graph, result, member_of)
    for edge in graph.edges:
        source, target = member_of.get(edge.source.name), member_of.get(edge.target.name)
        if source is not None and source == target:
            continue  # inside a chain
        result.connect_like(
            edge, made[source or (edge.source.name,)], made[target or (edge.target.name,)]
        )
    return result


def _add_chain(result: JobGraph, members: list[JobVertex]) -> JobVertex:
    """One vertex for the chain of ``members``: the head's sources, the parallelism a member
    fixed, the least max parallelism of any member, the members' operators in order."""
    fixed = next((m for m in members if m.parallelism is not None), None)
    limits = [m.max_parallelism for m in members if m.max_parallelism is not None]
    names = tuple(m.name for m in members)
    return result.add_vertex(
        chain_name(names),
        fixed.parallelism if fixed else None,
        min(limits) if limits else None,
        ChainedOperator(names, tuple(m.operator for m in members), fixed.name if fixed else None),
        members[0].sources,
        members[0].chain_start,
    )
