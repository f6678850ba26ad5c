"""Several planned queries as one Tidal job: their graphs side by side, each with its own
result sink.

A Tidal job costs about a second beyond its work (a JobManager taken, its store written, its
regions scheduled, its sinks committed), and the fuzzer's queries are a few kilobytes of work
each; run one job per query, the fuzzer would measure that second hundreds of times. A job
graph may hold unconnected parts, and a ``ResultSink`` each (the job's cleanup removes every
one), so a batch of planned queries is one job: each query's vertices and edges copied under a
prefix of its own (``q3 ...``), and the join ids the JobManager decides joins by made unique
the same way (``JoinInput.join`` on the edges, ``PlannedJoin.join`` in each piece's SQL
operator, which must agree). The answers are read back one sink at a time, under each query's
own column names.

A batch that fails fails whole; the runner then runs its queries one job each, to tell which.
"""

from __future__ import annotations

from dataclasses import replace

from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.operators import SqlOperator

__all__ = ["combined_graph"]


def combined_graph(graphs: list[JobGraph], name: str = "fuzz batch") -> JobGraph:
    """One job graph holding each of ``graphs``, the i-th one's names prefixed ``q<i> ``."""
    job = JobGraph(name)
    for index, graph in enumerate(graphs):
        prefix = f"q{index} "
        copies = {}
        for vertex in graph.topological_order():
            operator = vertex.operator
            if isinstance(operator, SqlOperator) and operator.joins:
                operator = replace(
                    operator, joins=tuple(replace(j, join=prefix + j.join) for j in operator.joins)
                )
            copies[vertex.name] = job.add_vertex(
                prefix + vertex.name,
                vertex.parallelism,
                vertex.max_parallelism,
                operator,
                vertex.sources,
                vertex.chain_start,
            )
        for edge in graph.edges:
            join = replace(edge.join, join=prefix + edge.join.join) if edge.join else None
            job.connect(
                copies[edge.source.name],
                copies[edge.target.name],
                edge.partitioner,
                edge.result_type,
                edge.pattern,
                edge.splittable,
                edge.dynamic_filtering,
                join,
                prefix + edge.id,
                edge.pre_aggregated,
            )
    return job
