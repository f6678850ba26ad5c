"""The read-only view of the core that the shell carries out commands with, never the state.

A command names what it acts on: a subtask's attempt, some partitions, a vertex. What the shell
needs beyond the names (a deployment descriptor's inputs, the descriptor groups a released
partition fed, a vertex's sources, a finished job's sinks and their final attempts) it asks
this view, on the main loop between events, and the view changes nothing. So the executor
depends on these few questions, not on the state's fields, and the state can change shape
without the shell noticing.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from jobmanager.core import commands as cmd
from jobmanager.core.deployment import DescriptorCache, TaskDeploymentDescriptorFactory
from jobmanager.messages.deployment import TaskDeploymentDescriptor
from shuffle.ids import PartitionId

if TYPE_CHECKING:
    from jobmanager.core.state import JobManagerState

__all__ = ["CoreView"]

Describe = Callable[[cmd.DeployTask], TaskDeploymentDescriptor]


class CoreView:
    __slots__ = ("_state",)

    def __init__(self, state: JobManagerState) -> None:
        self._state = state

    def departed(self) -> dict[str, tuple[str, str]]:
        """The dead TaskManagers whose files the job kept: their node and shuffle root."""
        return {tm: (r.node, r.shuffle_root) for tm, r in self._state.departed.items()}

    def descriptors(
        self,
        job_id: str,
        cache: DescriptorCache,
        code_keys: Mapping[str, str],
        split_target_bytes: int,
    ) -> Describe:
        """How to describe a deployment: the descriptor of a ``DeployTask``'s attempt, with the
        ShuffleDescriptors of its inputs from the shell's ``cache``."""
        state = self._state
        growth = state.growth
        factory = TaskDeploymentDescriptorFactory(
            job_id,
            state.graph,
            ChainMap(state.task_managers, state.departed),
            cache,
            code_keys,
            split_target_bytes,
            (lambda name: growth.dynamic_filters(state.graph.job_vertex(name)))
            if growth
            else (lambda name: ()),
            lambda name: state.source_listing(name)[1],
            (lambda name, k: growth.ranges.key_range(name, k))
            if growth
            else (lambda name, k: None),
            (lambda name: tuple((j.join, j.side) for j in growth.joins.get(name, ())))
            if growth
            else (lambda name: ()),
        )
        return lambda deploy: factory.create(
            state.graph.vertex(deploy.vertex, deploy.subtask), deploy.attempt
        )

    def groups_fed_by(self, partitions: Sequence[PartitionId]) -> set[int]:
        """The consumed partition groups holding any of ``partitions``: their cached
        descriptors go stale when the partitions are released."""
        results = self._state.graph.results
        return {
            g.id for pid in partitions for g in results[pid.result].partitions[pid.index].groups
        }

    def sources(self, vertex: str) -> tuple:
        """The sources of ``vertex``, for the shell to ask (it may list files)."""
        return tuple(self._state.graph.job_graph.vertex(vertex).sources)

    def final_attempts(self) -> list[tuple[str, object, dict[int, int]]]:
        """Each vertex, its operator, and the attempt of each of its subtasks that counts:
        what a sink commit publishes."""
        return [
            (name, ejv.job_vertex.operator, {v.subtask: v.attempt for v in ejv.vertices})
            for name, ejv in self._state.graph.job_vertices.items()
        ]
