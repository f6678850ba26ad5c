"""The seams between scheduling decisions and their effects.

Strategies schedule through ``SchedulerOperations``; speculation, failover and reconciliation
change the job's state through ``StateOperations``. Neither writes the state's command buffer
or calls its private methods, so each can be tested against a recorder and the state can
change inside without them noticing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:
    from jobmanager.core.executiongraph import (
        ExecutionGraph,
        ExecutionVertex,
        IntermediateResultPartition,
    )
    from jobmanager.core.scheduler.slots import SlotPool
    from jobmanager.messages.jobstatus import JobStatus

__all__ = ["SchedulerOperations", "StateOperations"]


class SchedulerOperations(Protocol):
    """What a scheduling strategy may do: ask for slots for some subtasks and deploy them.

    The subtasks of one call are one bulk: they get their slots all together or not at all.
    """

    def allocate_slots_and_deploy(self, vertices: Sequence[ExecutionVertex]) -> None: ...

    def bytes_per_task(self, vertex: ExecutionVertex) -> int:
        """What the subtask is expected to read, where that is known before it runs (0: not
        known): subtasks ready together are deployed largest first."""
        ...


class StateOperations(Protocol):
    """What speculation, failover and reconciliation may do to the job's state, beside reading
    its graph, slot pool and status: the one interface they reach it through."""

    graph: ExecutionGraph
    slots: SlotPool
    status: JobStatus
    log: Any  # the job's structlog logger, quiet during a replay

    def emit(self, *commands: object) -> None:
        """Add commands to the answer of the event being applied."""
        ...

    def take(self, event: object) -> None:
        """Handle ``event`` as part of the one being applied."""
        ...

    def dispatch(self) -> None:
        """Deploy what the slot pool can now serve; ask for the TaskManagers it lacks."""
        ...

    def node_of(self, task_manager: str) -> str: ...

    def free_slot(self, v: ExecutionVertex) -> None: ...

    def cancel(self, v: ExecutionVertex) -> None:
        """Cancel the running attempt of ``v`` (its TaskManager answers TaskCanceled)."""
        ...

    def withdraw(self, v: ExecutionVertex) -> None:
        """Take back the slot request of a scheduled ``v``, which never ran."""
        ...

    def release_partitions(self, partitions: Sequence[IntermediateResultPartition]) -> None:
        """Delete the files of the available ones among ``partitions``."""
        ...

    def canceled(self, v: ExecutionVertex) -> None:
        """``v``'s cancellation is done: free its slot, restart it if a failover waits."""
        ...

    def fail_over(
        self, failed: list[ExecutionVertex], cause: str, time_ms: int, counted: bool = True
    ) -> None:
        """Restart what ``failed`` needs, after the restart strategy's back-off."""
        ...

    def maybe_terminate(self) -> None:
        """End a failing or cancelling job once nothing of it runs."""
        ...
