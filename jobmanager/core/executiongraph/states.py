"""The life cycle of a task attempt and of a result partition, as tables.

Every change of a task's state goes through ``TransitionLog.move``, which checks the change
against ``ALLOWED`` and remembers it, so an impossible change raises an ``InvalidTransition``
carrying the recent story of that task rather than corrupting the state.
"""

from __future__ import annotations

from collections import deque
from enum import Enum
from typing import TYPE_CHECKING

from jobmanager.errors import InvalidTransition

if TYPE_CHECKING:
    from jobmanager.core.executiongraph.vertex import ExecutionVertex

__all__ = ["ALLOWED", "ExecutionState", "PartitionState", "TransitionLog"]


class ExecutionState(Enum):
    CREATED = "created"
    SCHEDULED = "scheduled"  # waiting for slots
    DEPLOYING = "deploying"  # slot assigned, deployment sent
    RUNNING = "running"
    FINISHED = "finished"
    CANCELING = "canceling"
    CANCELED = "canceled"
    FAILED = "failed"

    @property
    def is_terminal(self) -> bool:
        return self in (ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED)

    @property
    def holds_slot(self) -> bool:
        return self in (ExecutionState.DEPLOYING, ExecutionState.RUNNING, ExecutionState.CANCELING)


S = ExecutionState
ALLOWED: dict[ExecutionState, frozenset[ExecutionState]] = {
    S.CREATED: frozenset({S.SCHEDULED, S.CANCELED}),
    S.SCHEDULED: frozenset({S.DEPLOYING, S.CANCELED, S.FAILED}),
    S.DEPLOYING: frozenset({S.RUNNING, S.FINISHED, S.FAILED, S.CANCELING}),
    S.RUNNING: frozenset({S.FINISHED, S.FAILED, S.CANCELING}),
    S.CANCELING: frozenset({S.CANCELED}),
    S.FINISHED: frozenset({S.CREATED}),
    S.CANCELED: frozenset({S.CREATED}),
    S.FAILED: frozenset({S.CREATED}),
}
del S


class PartitionState(Enum):
    PENDING = "pending"  # its producer has not finished this attempt
    AVAILABLE = "available"  # finished and stored on a TaskManager
    RELEASED = "released"  # finished, then deleted because every consumer finished
    LOST = "lost"  # finished, but its TaskManager died or a reader found it broken

    @property
    def is_finished(self) -> bool:
        """Counted as produced by its consumed groups: a lost partition is not, so its
        consumers wait for the producer to run again rather than read nothing."""
        return self is PartitionState.AVAILABLE or self is PartitionState.RELEASED


class TransitionLog:
    """Checks and records task state changes; keeps the most recent ones for error stories."""

    def __init__(self, keep: int = 4096) -> None:
        self._recent: deque[tuple[str, int, int, ExecutionState, ExecutionState]] = deque(
            maxlen=keep
        )

    def move(self, vertex: ExecutionVertex, to: ExecutionState) -> None:
        current = vertex.state
        if to not in ALLOWED[current]:
            raise InvalidTransition(
                vertex.label, current.value, to.value, self.story(vertex.name, vertex.subtask)
            )
        self._recent.append((vertex.name, vertex.subtask, vertex.attempt, current, to))
        vertex.state = to

    def story(self, name: str, subtask: int) -> list[str]:
        return [
            f"attempt {attempt}: {old.value} -> {new.value}"
            for n, s, attempt, old, new in self._recent
            if n == name and s == subtask
        ]
