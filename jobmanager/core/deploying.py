"""Slots and deployment: the part of ``JobManagerState`` that deploys what the slot pool can
serve, on the node holding most of a task's input, and that frees, cancels, withdraws and
releases.

A mixin of the state, as ``Failing`` and ``Reconciling`` are, split out to keep each module
about one thing; what it offers the rest of the core (``dispatch``, ``node_of``,
``free_slot``, ``cancel``, ``withdraw``, ``release_partitions``) is part of
``StateOperations``.
"""

from __future__ import annotations

from typing import Sequence

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import (
    ExecutionState,
    ExecutionVertex,
    IntermediateResultPartition,
    PartitionState,
)
from jobmanager.core.scheduler.slots import Slot, SlotRequest
from jobmanager.messages.jobstatus import JobStatus

__all__ = ["Deploying"]

S = ExecutionState
_PREFERRED_INPUT_PARTITIONS = 8  # Flink's MAX_DISTINCT_LOCATIONS_TO_CONSIDER


class Deploying:
    def dispatch(self) -> None:
        """Deploy what the slot pool can now serve, and ask for TaskManagers it lacks."""
        if self.status is not JobStatus.RUNNING or self._reconciling:
            return
        for request, slots in self.slots.fulfil(self._preferred_node, self.node_of):
            self._deploy(request, slots)
        sizes = self.slots.task_managers_to_request()
        for size in sorted(set(sizes), reverse=True):
            self.emit(cmd.RequestTaskManagers(sizes.count(size), size))

    def request_ahead(self) -> None:
        """At the job's start, while its sources are still being sized (a listing of their
        files away): the first TaskManager, so that its lease and attachment, a few round trips
        through the ResourceManager, overlap the sizing instead of following it. (The shell
        has asked the ResourceManager for it earlier still, before admitting the job: its
        ``EarlyLease`` answers this request.)"""
        if self.status is not JobStatus.RUNNING or self._reconciling:
            return
        for size in self.slots.task_managers_ahead():
            self.emit(cmd.RequestTaskManagers(1, size))

    def _preferred_node(self, request: SlotRequest) -> str | None:
        """The node holding most of a task's input bytes, as Flink's preferred locations:
        only inputs of at most a few partitions count (a wide all-to-all input is spread over
        the cluster anyway, and weighing it would cost O(producers) per task)."""
        weight: dict[str, int] = {}
        for group in request.vertices[0].consumed_groups:
            if len(group.partitions) > _PREFERRED_INPUT_PARTITIONS:
                continue
            produced = group.result.produced
            for p in group.partitions:
                available = p.state is PartitionState.AVAILABLE
                registered = self.registration(p.location) if available else None
                if registered is not None:
                    size = int(produced.partition_totals[p.index]) if produced is not None else 1
                    weight[registered.node] = weight.get(registered.node, 0) + size
        return max(weight, key=weight.__getitem__) if weight else None

    def node_of(self, task_manager: str) -> str:
        registered = self.task_managers.get(task_manager)
        return registered.node if registered is not None else ""

    def _deploy(self, request: SlotRequest, slots: list[Slot]) -> None:
        used: dict[str, int] = {}
        move = self.graph.transitions.move
        shared = len(request.vertices) > len(slots)
        for v in request.vertices:
            del self._requests[v.index]
            k = used.get(v.name, 0)
            used[v.name] = k + 1
            slot = slots[k]
            self.slots.acquire(slot, shared)
            v.slot = slot
            move(v, S.DEPLOYING)
            self._active += 1
            self.emit(cmd.DeployTask(v.name, v.subtask, v.attempt, slot.task_manager, slot.index))

    def export_deployments(self) -> tuple[tuple[tuple[int, int], ...], int]:
        """For a snapshot: each open slot request, as ``(vertex index, position of its request
        among the slot pool's pending ones)``, and how many tasks hold a slot;
        ``restore_deployments`` takes them back."""
        pending = list(self.slots.pending)
        requests = tuple((index, pending.index(r)) for index, r in self._requests.items())
        return requests, self._active

    def restore_deployments(
        self, requests: tuple, active: int, pending: Sequence[SlotRequest]
    ) -> None:
        """What ``export_deployments`` gave, against the restored pool's ``pending``."""
        self._requests = {index: pending[position] for index, position in requests}
        self._active = active

    def free_slot(self, v: ExecutionVertex) -> None:
        self.slots.release(v.slot)
        v.slot = None
        self._active -= 1

    def cancel(self, v: ExecutionVertex) -> None:
        self.speculation.drop(v)
        self.graph.transitions.move(v, S.CANCELING)
        self.emit(cmd.CancelTask(v.name, v.subtask, v.attempt, v.slot.task_manager))

    def withdraw(self, v: ExecutionVertex) -> None:
        request = self._requests.pop(v.index, None)
        if request is not None:
            self.slots.cancel(request)
        self.graph.transitions.move(v, S.CANCELED)

    def release_partitions(self, partitions: Sequence[IntermediateResultPartition]) -> None:
        """Release the available ones among ``partitions``."""
        by_task_manager: dict[str, list] = {}
        for p in partitions:
            if p.state is PartitionState.AVAILABLE:
                by_task_manager.setdefault(p.location, []).append(p)
                p.mark_released()
        for task_manager, released in by_task_manager.items():
            self.emit(
                cmd.ReleasePartitions(
                    task_manager,
                    tuple(p.id for p in released),
                    tuple(p.producer.attempt for p in released),
                )
            )
