"""Connecting a consumer job vertex to a result it reads, with groups instead of edges.

All-to-all: one ConsumedPartitionGroup of every partition, shared by every consumer, and one
ConsumerVertexGroup of every consumer, shared by every partition. Pointwise: consecutive
consumers that read the same span of partitions share one pair of groups, which reproduces
Flink's EdgeManager index formulas for upstream parallelism above, equal to and below the
downstream's (see ``FormulaInputInfo``) and also connects the adaptive scheduler's balanced
pointwise ranges.
"""

from __future__ import annotations

from typing import Callable

from jobmanager.core.executiongraph.groups import ConsumedPartitionGroup, ConsumerVertexGroup
from jobmanager.core.executiongraph.inputs import JobVertexInputInfo
from jobmanager.core.executiongraph.partition import IntermediateResult
from jobmanager.core.executiongraph.vertex import ExecutionJobVertex
from jobmanager.model.jobgraph import DistributionPattern

__all__ = ["connect_to_result"]


def connect_to_result(
    consumer: ExecutionJobVertex,
    result: IntermediateResult,
    info: JobVertexInputInfo,
    next_group_id: Callable[[], int],
) -> list[ConsumedPartitionGroup]:
    """Wire ``consumer``'s subtasks to ``result``'s partitions; return the groups made."""
    if result.pattern is DistributionPattern.ALL_TO_ALL:
        runs = [(0, len(result.partitions) - 1, consumer.vertices)]
    else:
        runs = _runs_of_equal_spans(consumer, info)
    groups = []
    for first, last, vertices in runs:
        partitions = result.partitions[first : last + 1]
        group = ConsumedPartitionGroup(next_group_id(), result, partitions)
        consumers = ConsumerVertexGroup(vertices, group)
        group.consumers = consumers
        _append_shared(vertices, "consumed_groups", group)
        _append_shared(partitions, "consumer_groups", consumers)
        _append_shared(partitions, "groups", group)
        groups.append(group)
    return groups


def _runs_of_equal_spans(consumer: ExecutionJobVertex, info: JobVertexInputInfo):
    runs: list[tuple[int, int, list]] = []
    for vertex in consumer.vertices:
        span = info[vertex.subtask].partition_span
        if runs and runs[-1][0] == span.start and runs[-1][1] == span.end:
            runs[-1][2].append(vertex)
        else:
            runs.append((span.start, span.end, [vertex]))
    return runs


def _append_shared(items, attribute: str, value) -> None:
    """``item.attribute += (value,)`` for every item, sharing one new tuple among items that
    shared the old one, so N identical subtasks hold one tuple instead of N."""
    extended: dict[int, tuple[tuple, tuple]] = {}
    for item in items:
        old = getattr(item, attribute)
        entry = extended.get(id(old))
        if entry is None:
            entry = extended[id(old)] = (old, old + (value,))
        setattr(item, attribute, entry[1])
