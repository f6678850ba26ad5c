"""When may a blocking partition be deleted? When every region that consumes it has finished.

Counted, not searched: each region keeps its number of unfinished subtasks and each consumed
group its number of unfinished consumer regions, so a finish costs O(groups it touches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobmanager.core.executiongraph import ExecutionState

if TYPE_CHECKING:
    from jobmanager.core.executiongraph import (
        ConsumedPartitionGroup,
        ExecutionVertex,
        IntermediateResultPartition,
        TopologyUpdate,
    )
    from jobmanager.core.scheduler.regions import SchedulingPipelinedRegion

__all__ = ["RegionPartitionGroupReleaseStrategy"]


class RegionPartitionGroupReleaseStrategy:
    """Flink's region partition group release strategy; a topology listener."""

    def __init__(self) -> None:
        self.unfinished_in_region: dict[int, int] = {}
        self.unfinished_consumer_regions: dict[int, int] = {}

    def on_topology_updated(self, update: TopologyUpdate) -> None:
        for vertex in update.new_vertices:
            region = vertex.region
            if region.id in self.unfinished_in_region:
                continue
            self.unfinished_in_region[region.id] = len(region.vertices)
            for group in self._released_groups(region):
                self.unfinished_consumer_regions[group.id] = (
                    self.unfinished_consumer_regions.get(group.id, 0) + 1
                )

    def vertex_finished(self, vertex: ExecutionVertex) -> list[IntermediateResultPartition]:
        """Record a finish; return the partitions that may now be released."""
        region = vertex.region
        self.unfinished_in_region[region.id] -= 1
        if self.unfinished_in_region[region.id] > 0:
            return []
        releasable: list[IntermediateResultPartition] = []
        for group in self._released_groups(region):
            self.unfinished_consumer_regions[group.id] -= 1
            if self.unfinished_consumer_regions[group.id] == 0:
                releasable.extend(p for p in group.partitions if self._all_groups_done(p))
        return releasable

    def vertex_unfinished(self, vertex: ExecutionVertex) -> None:
        """A finished subtask is about to run again (failover): its region is unfinished."""
        region = vertex.region
        was_finished = self.unfinished_in_region[region.id] == 0
        self.unfinished_in_region[region.id] += 1
        if was_finished:
            for group in self._released_groups(region):
                self.unfinished_consumer_regions[group.id] += 1

    def recount(self, regions) -> None:
        """Count again from the subtasks' states (a snapshot restores states, not counts)."""
        self.unfinished_consumer_regions = dict.fromkeys(self.unfinished_consumer_regions, 0)
        for region in regions:
            unfinished = sum(1 for v in region.vertices if v.state is not ExecutionState.FINISHED)
            self.unfinished_in_region[region.id] = unfinished
            if unfinished:
                for group in self._released_groups(region):
                    self.unfinished_consumer_regions[group.id] += 1

    def _all_groups_done(self, partition: IntermediateResultPartition) -> bool:
        return all(self.unfinished_consumer_regions.get(g.id) == 0 for g in partition.groups)

    @staticmethod
    def _released_groups(region: SchedulingPipelinedRegion) -> list[ConsumedPartitionGroup]:
        return [g for g in region.blocking_groups if g.result.result_type.is_released_by_scheduler]
