"""Forward groups: vertices joined by FORWARD edges share one parallelism (FLIP-187).

A FORWARD edge reads partition k into subtask k, so both ends need the same parallelism. In a
growing graph that parallelism is decided once, for the whole group, by the first member to be
decided, and never above any member's max parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobmanager.core.executiongraph import ExecutionGraph

__all__ = ["ForwardGroup", "compute_forward_groups"]


@dataclass
class ForwardGroup:
    names: list[str]
    max_parallelism: int
    parallelism: int | None

    def __contains__(self, name: str) -> bool:
        return name in self.names


def compute_forward_groups(graph: ExecutionGraph) -> dict[str, ForwardGroup]:
    """Map each vertex on a FORWARD edge to its group; other vertices have none."""
    groups: dict[str, ForwardGroup] = {}
    for names in _forward_connected(graph):
        if len(names) < 2:
            continue
        group = _group(graph, names)
        for name in names:
            groups[name] = group
    return groups


def _forward_connected(graph: ExecutionGraph) -> list[list[str]]:
    """The vertices joined by FORWARD edges, each set in topological order (union-find)."""
    parent = {name: name for name in graph.job_vertices}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for result in graph.results.values():
        if result.edge.is_forward:
            a, b = root(result.producer.name), root(result.consumer.name)
            if a != b:
                parent[b] = a
    members: dict[str, list[str]] = {}
    for name in graph.job_vertices:  # topological order
        members.setdefault(root(name), []).append(name)
    return list(members.values())


def _group(graph: ExecutionGraph, names: list[str]) -> ForwardGroup:
    """A forward group: the smallest max parallelism of its vertices, and the parallelism
    one of them fixes, if any."""
    vertices = [graph.job_vertices[n] for n in names]
    fixed = {v.job_vertex.parallelism for v in vertices} - {None}
    return ForwardGroup(
        names, min(v.max_parallelism for v in vertices), fixed.pop() if fixed else None
    )
