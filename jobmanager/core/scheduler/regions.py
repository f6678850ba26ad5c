"""Pipelined regions: the subtasks that must be scheduled, and restarted, together.

Computed the Flink 1.14 way, from logical regions (over job vertices) so the expensive part never
sees an all-to-all edge:

1. Logical regions join job vertices over must-be-pipelined edges. Tidal also merges logical
   regions that depend on each other in a cycle through blocking edges (A -pipelined-> C with
   A -blocking-> B -blocking-> C is a DAG whose two logical regions wait on each other); Flink
   skips this step, which can deadlock such a job.
2. A logical region with an all-to-all edge between two of its own job vertices becomes one
   scheduling region directly: pipelined, its subtasks must run together; blocking, its subtasks
   would wait on each other in a cycle.
3. Otherwise only pointwise edges remain inside it: subtasks join over must-be-pipelined inputs,
   then regions that wait on each other in a cycle through blocking edges are merged with
   Tarjan's strongly connected components, over O(n) edges.

Regions are computed per logical region as its job vertices are initialised; existing regions
never change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from jobmanager.errors import JobGraphError
from jobmanager.model.jobgraph import DistributionPattern, JobGraph, JobVertex

if TYPE_CHECKING:
    from jobmanager.core.executiongraph import (
        ConsumedPartitionGroup,
        ExecutionGraph,
        ExecutionVertex,
        TopologyUpdate,
    )

__all__ = [
    "LogicalPipelinedRegion",
    "PipelinedRegions",
    "SchedulingPipelinedRegion",
    "compute_logical_regions",
    "strongly_connected_components",
]


class SchedulingPipelinedRegion:
    """Subtasks that are deployed together and restarted together.

    ``blocking_groups`` are the non-pipelined groups its subtasks consume, including any produced
    inside the region; the scheduling strategy tells internal from external ones.
    """

    __slots__ = ("id", "vertices", "blocking_groups")

    def __init__(
        self,
        id: int,
        vertices: Sequence[ExecutionVertex],
        blocking_groups: tuple[ConsumedPartitionGroup, ...],
    ) -> None:
        self.id = id
        self.vertices = vertices
        self.blocking_groups = blocking_groups

    def __len__(self) -> int:
        return len(self.vertices)

    def __contains__(self, vertex: ExecutionVertex) -> bool:
        return vertex.region is self

    def __repr__(self) -> str:
        labels = ", ".join(v.label for v in self.vertices[:4])
        more = f", ... ({len(self.vertices)} subtasks)" if len(self.vertices) > 4 else ""
        return f"Region({self.id}: {labels}{more})"


class LogicalPipelinedRegion:
    __slots__ = ("names", "has_internal_all_to_all", "has_internal_edges")

    def __init__(self, names: list[str], has_internal_all_to_all: bool, has_internal_edges: bool):
        self.names = names
        self.has_internal_all_to_all = has_internal_all_to_all
        self.has_internal_edges = has_internal_edges

    def __repr__(self) -> str:
        return f"LogicalPipelinedRegion({self.names})"


def compute_logical_regions(
    job_graph: JobGraph, resolved_pattern
) -> dict[str, LogicalPipelinedRegion]:
    """Map each job vertex name to its logical region. ``resolved_pattern(edge)`` gives the
    distribution pattern the scheduler settled for an edge."""
    order = job_graph.topological_order()
    position = {v.name: i for i, v in enumerate(order)}

    def pipelined_producers(v: JobVertex) -> Iterable[int]:
        return (position[e.source.name] for e in v.inputs if e.result_type.must_be_pipelined)

    raw = _raw_regions(len(order), [list(pipelined_producers(v)) for v in order])
    out_edges = _blocking_edges(order, position, raw)
    merged = [
        sorted(m for r in component for m in raw[r])
        for component in strongly_connected_components(out_edges)
    ]
    merged.sort(key=lambda members: members[0])
    regions: dict[str, LogicalPipelinedRegion] = {}
    for members in merged:
        region = _logical_region(job_graph, [order[m].name for m in members], resolved_pattern)
        for name in region.names:
            regions[name] = region
    return regions


def _blocking_edges(order: list, position: dict[str, int], raw: list) -> list[list[int]]:
    """Between the pipelined regions ``raw`` (of positions in ``order``), the blocking edges
    from one region to another, as each region's list of targets."""
    region_of = {member: index for index, members in enumerate(raw) for member in members}
    out_edges: list[list[int]] = [[] for _ in raw]
    for v in order:
        for e in v.outputs:
            src, dst = region_of[position[v.name]], region_of[position[e.target.name]]
            if src != dst and not e.result_type.must_be_pipelined:
                out_edges[src].append(dst)
    return out_edges


def _logical_region(job_graph: JobGraph, names: list[str], resolved_pattern):
    """The region of ``names``: all-to-all if an edge inside it is, pipelined if any is."""
    inside = set(names)
    internal = [
        e for name in names for e in job_graph.vertex(name).inputs if e.source.name in inside
    ]
    return LogicalPipelinedRegion(
        names,
        any(resolved_pattern(e) is DistributionPattern.ALL_TO_ALL for e in internal),
        bool(internal),
    )


class PipelinedRegions:
    """The scheduling regions of the subtasks initialised so far; a topology listener."""

    def __init__(self, graph: ExecutionGraph) -> None:
        self.logical = compute_logical_regions(
            graph.job_graph, lambda edge: graph.results[edge.id].pattern
        )
        self.regions: list[SchedulingPipelinedRegion] = []

    def on_topology_updated(self, update: TopologyUpdate) -> None:
        graph, new_job_vertices = update.graph, update.new_job_vertices
        new_names = {ejv.name for ejv in new_job_vertices}
        seen: list[LogicalPipelinedRegion] = []
        if any(ejv.name not in self.logical for ejv in new_job_vertices):
            self.logical = compute_logical_regions(  # vertices were fused at run time
                graph.job_graph, lambda edge: graph.results[edge.id].pattern
            )
        for ejv in new_job_vertices:
            logical = self.logical[ejv.name]
            if logical in seen:
                continue
            seen.append(logical)
            _check_initialised_together(logical, new_names)
            members = [v for name in logical.names for v in graph.job_vertices[name].vertices]
            members.sort(key=lambda v: v.index)
            self._add(self._compute(logical, members))

    def _compute(
        self, logical: LogicalPipelinedRegion, members: list[ExecutionVertex]
    ) -> list[Sequence[ExecutionVertex]]:
        if not logical.has_internal_edges:
            return [(v,) for v in members]
        if logical.has_internal_all_to_all:
            return [members]
        return _regions_over_pointwise_edges(members, set(logical.names))

    def _add(self, groups: list[Sequence[ExecutionVertex]]) -> None:
        for vertices in groups:
            region = SchedulingPipelinedRegion(
                len(self.regions), vertices, _blocking_groups(vertices)
            )
            for v in vertices:
                v.region = region
            self.regions.append(region)

    def __len__(self) -> int:
        return len(self.regions)

    def __iter__(self):
        return iter(self.regions)


def _blocking_groups(vertices: Sequence[ExecutionVertex]) -> tuple[ConsumedPartitionGroup, ...]:
    if len(vertices) == 1:
        groups = vertices[0].consumed_groups
        if all(not g.result.result_type.must_be_pipelined for g in groups):
            return groups  # shared with the subtask, and with its identical siblings
    unique: dict[int, ConsumedPartitionGroup] = {}
    for v in vertices:
        for g in v.consumed_groups:
            if not g.result.result_type.must_be_pipelined:
                unique.setdefault(g.id, g)
    return tuple(unique.values())


def _regions_over_pointwise_edges(
    members: list[ExecutionVertex], names: set[str]
) -> list[Sequence[ExecutionVertex]]:
    position = {id(v): i for i, v in enumerate(members)}
    raw = _raw_regions(len(members), _pipelined_producer_positions(members, position))
    out_edges = _blocking_edges_between_regions(members, names, raw, position)
    result = []
    for component in strongly_connected_components(out_edges):
        indices = sorted(m for r in component for m in raw[r])
        result.append([members[i] for i in indices])
    result.sort(key=lambda vertices: vertices[0].index)
    return result


def _pipelined_producer_positions(
    members: list[ExecutionVertex], position: dict[int, int]
) -> list[list[int]]:
    """The producers each subtask must run at the same time as, so they join its region."""
    return [
        [
            position[id(p.producer)]
            for g in v.consumed_groups
            if g.result.result_type.must_be_pipelined
            for p in g.partitions
        ]
        for v in members
    ]


def _region_index_of_members(raw: list[list[int]], count: int) -> list[int]:
    """Edges are drawn between regions, so each subtask needs the index of the region it is in."""
    region_of = [0] * count
    for index, region in enumerate(raw):
        for m in region:
            region_of[m] = index
    return region_of


def _blocking_edges_between_regions(
    members: list[ExecutionVertex],
    names: set[str],
    raw: list[list[int]],
    position: dict[int, int],
) -> list[list[int]]:
    """For each region, the other regions that wait on its blocking output (once per consuming
    subtask): the edges over which regions waiting on each other in a cycle are found."""
    region_of = _region_index_of_members(raw, len(members))
    return [
        [
            target
            for m in region
            for consumer in _blocking_consumers_in_logical_region(members[m], names)
            if (target := region_of[position[id(consumer)]]) != index
        ]
        for index, region in enumerate(raw)
    ]


def _blocking_consumers_in_logical_region(
    vertex: ExecutionVertex, names: set[str]
) -> Iterator[ExecutionVertex]:
    """The consumers of a subtask that could close a cycle of regions inside its logical
    region: a pipelined consumer already shares its region, and cycles through other logical
    regions were merged with the logical regions themselves."""
    for partition in vertex.produced:
        if partition.result.result_type.must_be_pipelined:
            continue
        if partition.result.consumer.name not in names:
            continue
        for consumers in partition.consumer_groups:
            yield from consumers.vertices


def _raw_regions(count: int, pipelined_producers: list[list[int]]) -> list[list[int]]:
    """Join each node with the producers it must run with; nodes are in topological order.
    The smaller set is merged into the larger, so the whole walk is O(n log n)."""
    region_of: list[list[int]] = [None] * count  # type: ignore[list-item]
    for node in range(count):
        current = [node]
        region_of[node] = current
        for producer in pipelined_producers[node]:
            other = region_of[producer]
            if other is current:
                continue
            small, large = (current, other) if len(current) < len(other) else (other, current)
            large.extend(small)
            for member in small:
                region_of[member] = large
            current = large
    unique: dict[int, list[int]] = {}
    for region in region_of:
        unique.setdefault(id(region), region)
    return [sorted(r) for r in unique.values()]


def strongly_connected_components(out_edges: list[list[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative so deep graphs do not hit Python's recursion limit."""
    count = len(out_edges)
    index = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in range(count):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            node, next_edge = work[-1]
            edges = out_edges[node]
            if next_edge < len(edges):
                work[-1] = (node, next_edge + 1)
                target = edges[next_edge]
                if index[target] == -1:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack[target] = True
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                components.append(_pop_component(stack, on_stack, node))
    return components


def _pop_component(stack: list[int], on_stack: list[bool], root: int) -> list[int]:
    """The strongly connected component of ``root``: the stack down to it, popped."""
    component = []
    while True:
        member = stack.pop()
        on_stack[member] = False
        component.append(member)
        if member == root:
            return component


def _check_initialised_together(logical, new_names: set[str]) -> None:
    missing = [n for n in logical.names if n not in new_names]
    if missing:
        raise JobGraphError(
            f"vertices {sorted(new_names & set(logical.names))} share a pipelined region "
            f"with {missing} and must be initialised together"
        )
