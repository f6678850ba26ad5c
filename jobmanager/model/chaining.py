"""Operator chaining, as Flink does it: vertices joined by a FORWARD edge run as one task.

An edge chains when it is FORWARD (so both ends have the same parallelism: equal fixed ones,
or one forward group's decided one), its producer has no other consumer, its consumer no other
input (no second edge, no source of its own), the consumer is not marked ``chain_start``
(Flink's ``startNewChain``), the producer is not a sink, and chaining is on
(``pipeline.operator-chaining.enabled``, Flink's key, on by default). A chain runs as one task
with no partition file inside it: its PySpark functions compose into one Spark query, its
Arrow functions hand the table on in memory, a sink at its end writes the chain's result.

The JobManager decides the chains when it takes the job and records them in the job's first
event (``JobSubmitted.chains``), so a replay rebuilds the same graph without deciding again;
the scheduler, the job's status, ``tidal explain`` and the report see one vertex per chain,
named as Flink names it, ``a -> b``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from jobmanager.model.jobgraph import JobGraph, JobVertex, PartitionerKind
from jobmanager.model.operators import ParquetSink

__all__ = ["ChainedOperator", "chain_name", "chained_graph", "decide_chains"]


@dataclass(frozen=True)
class ChainedOperator:
    """The operators of a chain's vertices, in order (None: a vertex passing its input on)."""

    names: tuple[str, ...]
    operators: tuple[Any, ...]

    def __str__(self) -> str:
        return " -> ".join(str(op) if op is not None else "pass-through" for op in self.operators)

    @property
    def sink(self) -> ParquetSink | None:
        last = self.operators[-1]
        return last if isinstance(last, ParquetSink) else None


def chain_name(names: Sequence[str]) -> str:
    return " -> ".join(names)


def _chains_to_next(vertex: JobVertex) -> JobVertex | None:
    if len(vertex.outputs) != 1 or isinstance(vertex.operator, ParquetSink):
        return None
    edge = vertex.outputs[0]
    target = edge.target
    forward = edge.partitioner is not None and edge.partitioner.kind is PartitionerKind.FORWARD
    if not forward or len(target.inputs) != 1 or target.sources or target.chain_start:
        return None
    return target


def decide_chains(graph: JobGraph, enabled: bool = True) -> tuple[tuple[str, ...], ...]:
    """The chains of two or more vertices, each in data order, heads in graph order."""
    if not enabled:
        return ()
    chained_to: dict[str, str] = {}
    for vertex in graph.vertices:
        target = _chains_to_next(vertex)
        if target is not None:
            chained_to[vertex.name] = target.name
    heads = [v.name for v in graph.vertices if v.name in chained_to and v.name not in chained_to.values()]
    chains = []
    for head in heads:
        names = [head]
        while names[-1] in chained_to:
            names.append(chained_to[names[-1]])
        chains.append(tuple(names))
    return tuple(chains)


def chained_graph(graph: JobGraph, chains: Sequence[Sequence[str]]) -> JobGraph:
    """``graph`` with each chain one vertex: the head's sources and inputs, the tail's outputs,
    the members' operators in order. Without chains, ``graph`` itself."""
    if not chains:
        return graph
    member_of = {name: tuple(chain) for chain in chains for name in chain}
    result = JobGraph(graph.name)
    made: dict[tuple[str, ...], JobVertex] = {}
    for vertex in graph.vertices:
        chain = member_of.get(vertex.name)
        if chain is None:
            made[(vertex.name,)] = result.add_vertex(
                vertex.name, vertex.parallelism, vertex.max_parallelism, vertex.operator,
                vertex.sources, vertex.chain_start)  # fmt: skip
        elif vertex.name == chain[0]:
            members = [graph.vertex(name) for name in chain]
            fixed = [m.parallelism for m in members if m.parallelism is not None]
            limits = [m.max_parallelism for m in members if m.max_parallelism is not None]
            made[chain] = result.add_vertex(
                chain_name(chain), fixed[0] if fixed else None, min(limits) if limits else None,
                ChainedOperator(tuple(chain), tuple(m.operator for m in members)),
                vertex.sources, vertex.chain_start)  # fmt: skip
    for edge in graph.edges:
        source, target = member_of.get(edge.source.name), member_of.get(edge.target.name)
        if source is not None and source == target:
            continue  # inside a chain
        result.connect(made[source or (edge.source.name,)], made[target or (edge.target.name,)],
                       edge.partitioner, edge.result_type, edge.pattern, edge.splittable,
                       edge.dynamic_filtering)  # fmt: skip
    return result
