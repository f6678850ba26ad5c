"""Scheduling strategies: which subtasks to deploy, and when.

Both strategies read the execution graph and act only through ``SchedulerOperations``; neither
knows about slots, clocks or Ray. Each is a topology listener, so it learns of subtasks added as
the graph grows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from jobmanager.core.executiongraph import (
    ConsumedPartitionGroup,
    ExecutionState,
    ExecutionVertex,
    TopologyUpdate,
)
from jobmanager.core.scheduler.operations import SchedulerOperations

if TYPE_CHECKING:
    from jobmanager.core.scheduler.regions import PipelinedRegions, SchedulingPipelinedRegion

__all__ = ["PipelinedRegionSchedulingStrategy", "VertexwiseSchedulingStrategy", "is_consumable"]


def is_consumable(group: ConsumedPartitionGroup, scheduled_region) -> bool:
    """A blocking group is consumable when every partition is finished; a group that can be
    consumed while being produced (hybrid) as soon as its producers are scheduled."""
    if group.result.result_type.can_be_pipelined:
        return all(scheduled_region(p.producer.region) for p in group.partitions)
    return group.all_finished


class PipelinedRegionSchedulingStrategy:
    """Schedules whole pipelined regions once their blocking inputs are consumable.

    Starts with regions that consume nothing from outside; when a subtask finishes, tries the
    regions that consume what it produced, but only for groups that just became complete, so a
    10,000 x 10,000 all-to-all edge costs O(n), not O(n^2). Regions are handed over in
    topological order; how many run at once is the slot pool's business.
    """

    def __init__(self, operations: SchedulerOperations, regions: PipelinedRegions) -> None:
        self.operations = operations
        self.regions = regions
        self.scheduled: set[int] = set()
        # region ids consuming each group from outside the region, and groups produced partly
        # inside the consuming region (those are checked partition by partition)
        self.consumer_regions: dict[int, list[SchedulingPipelinedRegion]] = {}
        self.cross_region_groups: set[int] = set()

    def on_topology_updated(self, update: TopologyUpdate) -> None:
        producer_regions: dict[int, set[int]] = {}
        for region in _regions_of(update.new_vertices):
            for group in region.blocking_groups:
                producers = producer_regions.get(group.id)
                if producers is None:
                    producers = {p.producer.region.id for p in group.partitions}
                    producer_regions[group.id] = producers
                if len(producers) > 1 and region.id in producers:
                    self.cross_region_groups.add(group.id)
                    self.consumer_regions.setdefault(group.id, []).append(region)
                elif region.id not in producers:
                    self.consumer_regions.setdefault(group.id, []).append(region)

    def start_scheduling(self) -> None:
        self._maybe_schedule(r for r in self.regions if not self._waits_on_others(r))

    def on_vertex_finished(self, vertex: ExecutionVertex) -> None:
        candidates: list[SchedulingPipelinedRegion] = []
        for partition in vertex.produced:
            if partition.result.result_type.can_be_pipelined:
                continue
            for group in partition.groups:
                if group.all_finished or group.id in self.cross_region_groups:
                    candidates.extend(self.consumer_regions.get(group.id, ()))
        if candidates:
            self._maybe_schedule(candidates)

    def restart_tasks(self, vertices: Iterable[ExecutionVertex]) -> None:
        regions = {v.region.id: v.region for v in vertices}
        self.scheduled.difference_update(regions)
        self._maybe_schedule(regions.values())

    def export(self) -> tuple:
        return (tuple(sorted(self.scheduled)),)

    def restore(self, image: tuple, vertex_at) -> None:
        self.scheduled = set(image[0])

    def _waits_on_others(self, region: SchedulingPipelinedRegion) -> bool:
        return any(
            g.id in self.cross_region_groups or g.partitions[0].producer.region is not region
            for g in region.blocking_groups
        )

    def _maybe_schedule(self, regions: Iterable[SchedulingPipelinedRegion]) -> None:
        unique = {r.id: r for r in regions if r.id not in self.scheduled}
        consumable: dict[int, bool] = {}
        for region_id in sorted(unique):
            region = unique[region_id]
            if not self._inputs_consumable(region, consumable):
                continue
            assert all(v.state is ExecutionState.CREATED for v in region.vertices), (
                f"BUG: scheduling {region} whose subtasks are not all CREATED"
            )
            self.scheduled.add(region_id)
            self.operations.allocate_slots_and_deploy(region.vertices)

    def _inputs_consumable(self, region: SchedulingPipelinedRegion, cache: dict[int, bool]) -> bool:
        is_scheduled = self._is_scheduled
        for group in region.blocking_groups:
            if group.id in self.cross_region_groups:
                if not self._cross_region_consumable(group, region):
                    return False
            elif group.partitions[0].producer.region is not region:
                ok = cache.get(group.id)
                if ok is None:
                    ok = cache[group.id] = is_consumable(group, is_scheduled)
                if not ok:
                    return False
        return True

    def _cross_region_consumable(self, group, region: SchedulingPipelinedRegion) -> bool:
        """A group whose partitions come from several regions: each from another region is
        finished, or scheduled where it can be pipelined."""
        for p in group.partitions:
            if p.producer.region is region:
                continue
            if p.result.result_type.can_be_pipelined:
                if not self._is_scheduled(p.producer.region):
                    return False
            elif not p.is_finished:
                return False
        return True

    def _is_scheduled(self, region: SchedulingPipelinedRegion) -> bool:
        return region.id in self.scheduled


class VertexwiseSchedulingStrategy:
    """Schedules subtask by subtask, for the adaptive batch scheduler's growing graph.

    A subtask is deployable once every blocking group it consumes is complete. Subtasks added
    to the graph since the last pass are tried at the next one: without that, a consumer added
    after its producers finished would never be scheduled (FLIP-187). The subtasks of one pass
    ask for slots largest first, by what they are known to read (the job's sources, from
    their listings), then in graph order: when they are more than the slots, the longest
    start first and the short ones fill in beside them (Flink deploys in graph order).
    """

    def __init__(self, operations: SchedulerOperations) -> None:
        self.operations = operations
        self.scheduled: set[int] = set()
        self.newly_added: list[ExecutionVertex] = []
        self.started = False

    def on_topology_updated(self, update: TopologyUpdate) -> None:
        self.newly_added.extend(update.new_vertices)

    def start_scheduling(self) -> None:
        self.started = True
        self._maybe_schedule([])

    def on_vertex_finished(self, vertex: ExecutionVertex) -> None:
        consumers: list[ExecutionVertex] = []
        for partition in vertex.produced:
            for group in partition.consumer_groups:
                if is_consumable(group.consumed, self._region_scheduled):
                    consumers.extend(group.vertices)
        self._maybe_schedule(consumers)

    def restart_tasks(self, vertices: Iterable[ExecutionVertex]) -> None:
        vertices = list(vertices)
        self.scheduled.difference_update(v.index for v in vertices)
        self._maybe_schedule(vertices)

    def schedule_newly_added(self) -> None:
        """Run a pass for subtasks the graph gained outside of a finish event."""
        if self.started:
            self._maybe_schedule([])

    def export(self) -> tuple:
        return (
            tuple(sorted(self.scheduled)),
            tuple(v.index for v in self.newly_added),
            self.started,
        )

    def restore(self, image: tuple, vertex_at) -> None:
        scheduled, newly_added, self.started = image
        self.scheduled = set(scheduled)
        self.newly_added = [vertex_at(i) for i in newly_added]

    def _maybe_schedule(self, vertices: list[ExecutionVertex]) -> None:
        if self.newly_added:
            vertices = vertices + self.newly_added
            self.newly_added = []
        unique = {v.index: v for v in vertices if v.index not in self.scheduled}
        for vertex in self._largest_first(unique):
            index = vertex.index
            if vertex.state is not ExecutionState.CREATED:
                continue
            if all(
                g.result.result_type.must_be_pipelined or is_consumable(g, self._region_scheduled)
                for g in vertex.consumed_groups
            ):
                self.scheduled.add(index)
                self.operations.allocate_slots_and_deploy([vertex])

    def _region_scheduled(self, region) -> bool:
        return all(v.index in self.scheduled for v in region.vertices)

    def _largest_first(self, unique: dict[int, ExecutionVertex]) -> list[ExecutionVertex]:
        """By bytes known per task, descending, then graph order. A job vertex's subtasks
        share its size, so it is asked once per job vertex, and a pass of 10,000 subtasks of
        unknown size sorts plain integers."""
        sizes: dict[int, int] = {}
        for v in unique.values():
            if id(v.job_vertex) not in sizes:
                sizes[id(v.job_vertex)] = self.operations.bytes_per_task(v)
        if not any(sizes.values()):
            return [unique[index] for index in sorted(unique)]
        return sorted(unique.values(), key=lambda v: (-sizes[id(v.job_vertex)], v.index))


def _regions_of(vertices: list[ExecutionVertex]) -> list[SchedulingPipelinedRegion]:
    seen: dict[int, SchedulingPipelinedRegion] = {}
    for v in vertices:
        seen.setdefault(v.region.id, v.region)
    return list(seen.values())
