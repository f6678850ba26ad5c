"""The seam between scheduling decisions and their effects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    from jobmanager.core.executiongraph import ExecutionVertex

__all__ = ["SchedulerOperations"]


class SchedulerOperations(Protocol):
    """What a scheduling strategy may do: ask for slots for some subtasks and deploy them.

    The subtasks of one call are one bulk: they get their slots all together or not at all.
    """

    def allocate_slots_and_deploy(self, vertices: Sequence[ExecutionVertex]) -> None: ...

    def bytes_per_task(self, vertex: ExecutionVertex) -> int:
        """What the subtask is expected to read, where that is known before it runs (0: not
        known): subtasks ready together are deployed largest first."""
        ...
