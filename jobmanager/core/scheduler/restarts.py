"""Region restarts between the failover decision and the restart itself.

A restart the failover strategy asked for waits for two things: every subtask of it that was
running to confirm its cancellation, then the back-off delay, as a timer. Each pending restart
has a token; the timer started with it fires as an event naming it, and its subtasks restart
then. A subtask belongs to at most one pending restart, so a second failure among subtasks
already on their way back does not restart them twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from jobmanager.core.commands import StartTimer
from jobmanager.core.executiongraph import ExecutionVertex

__all__ = ["PendingRestarts"]


@dataclass(slots=True)
class _Restart:
    vertices: list[ExecutionVertex]
    delay_ms: int
    awaiting_cancel: int


class PendingRestarts:
    def __init__(self) -> None:
        self._restarts: dict[int, _Restart] = {}
        self._token_of: dict[int, int] = {}  # subtask index -> its restart's token
        self._next_token = 0

    def includes(self, v: ExecutionVertex) -> bool:
        return v.index in self._token_of

    def add(
        self, vertices: Sequence[ExecutionVertex], delay_ms: int, awaiting_cancel: int
    ) -> StartTimer | None:
        """Register a restart of ``vertices``; the timer to start now if it awaits no
        cancellation."""
        token = self._next_token
        self._next_token += 1
        self._restarts[token] = _Restart(list(vertices), delay_ms, awaiting_cancel)
        for v in vertices:
            self._token_of[v.index] = token
        return StartTimer(token, delay_ms) if awaiting_cancel == 0 else None

    def canceled(self, v: ExecutionVertex) -> StartTimer | None:
        """``v`` confirmed its cancellation; the timer to start now if it was the last one its
        restart waited for."""
        token = self._token_of.get(v.index)
        restart = self._restarts.get(token) if token is not None else None
        if restart is None:
            return None
        restart.awaiting_cancel -= 1
        return StartTimer(token, restart.delay_ms) if restart.awaiting_cancel == 0 else None

    def take(self, token: int) -> list[ExecutionVertex] | None:
        """The subtasks to restart now that ``token``'s timer fired; None for a token that is
        no longer pending."""
        restart = self._restarts.pop(token, None)
        if restart is None:
            return None
        for v in restart.vertices:
            del self._token_of[v.index]
        return restart.vertices

    def started_timers(self) -> list[StartTimer]:
        """The timers of restarts that await no cancellation: started already, and to start
        again by a shell that lost them."""
        return [
            StartTimer(token, r.delay_ms)
            for token, r in self._restarts.items()
            if r.awaiting_cancel == 0
        ]

    def clear(self) -> None:
        self._restarts.clear()
        self._token_of.clear()

    def export(self) -> tuple:
        return (
            tuple(
                (token, tuple(v.index for v in r.vertices), r.delay_ms, r.awaiting_cancel)
                for token, r in self._restarts.items()
            ),
            self._next_token,
        )

    def restore(self, image: tuple, vertex_at) -> None:
        restarts, self._next_token = image
        self._restarts.clear()
        self._token_of.clear()
        for token, indices, delay_ms, awaiting in restarts:
            vertices = [vertex_at(i) for i in indices]
            self._restarts[token] = _Restart(vertices, delay_ms, awaiting)
            for v in vertices:
                self._token_of[v.index] = token

    def describe(self) -> tuple:
        return (
            tuple(sorted(self._token_of.items())),
            tuple(
                (token, tuple(v.index for v in r.vertices), r.delay_ms, r.awaiting_cancel)
                for token, r in self._restarts.items()
            ),
            self._next_token,
        )
