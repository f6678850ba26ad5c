"""Which waiting TaskManager requests the ResourceManager serves, and how.

Many jobs share a session cluster's CPUs. Requests are served strictly in order (by when the
job asked first, then by when the request came), so no job is starved and a job submitted
second waits only for CPUs, never for a timeout. A request is served by an idle TaskManager of
its shape (warm: its modules, its JVM and its JIT), else by one of its shape on the way back
from another job, else by a new one when the CPUs are free, stopping idle TaskManagers of
other shapes to free them. The first request that none of these can serve blocks the ones
behind it from new TaskManagers, so a big request is never passed over for ever by small ones.

No Ray, no clock: the ResourceManager calls ``plan`` under its lock whenever something changed
(a request, a TaskManager back or gone) and carries out what it returns.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["Create", "Request", "Reuse", "plan"]


@dataclass(frozen=True, slots=True)
class Request:
    """A job's request for one TaskManager of ``shape`` = (slots, Spark driver memory)."""

    ticket: int
    job_id: str
    shape: tuple


@dataclass(frozen=True, slots=True)
class Reuse:
    ticket: int
    task_manager: str


@dataclass(frozen=True, slots=True)
class Create:
    """Start a new TaskManager for ``ticket``, after stopping the idle ones in ``stop``."""

    ticket: int
    stop: tuple[str, ...]


def plan(
    waiting: list[Request],
    idle: list[tuple[str, tuple]],
    returning: list[tuple],
    free_cpus: float,
    total_cpus: float,
) -> list[Reuse | Create]:
    """What to do for ``waiting`` (in the order they are to be served) now.

    ``idle``: the idle TaskManagers as (id, shape), the warmest first (the last ones are
    stopped first); ``returning``: the shapes of TaskManagers leaving a job; ``free_cpus``:
    the CPUs no TaskManager holds. A request larger than the whole cluster is let through to
    Ray, which keeps its TaskManager pending and says why, rather than blocking every job."""
    idle = list(idle)
    soon = Counter(returning)
    grants: list[Reuse | Create] = []
    for request in waiting:
        warm = _warm(idle, request.shape)
        if warm is not None:
            grants.append(Reuse(request.ticket, idle.pop(warm)[0]))
            continue
        if soon[request.shape] > 0:  # one is on its way back: worth the wait, it is warm
            soon[request.shape] -= 1
            continue
        slots = request.shape[0]
        freeable = free_cpus + sum(shape[0] for _, shape in idle)
        if freeable < slots and slots <= total_cpus:
            break
        stop, free_cpus = _stop_for(slots, free_cpus, idle)
        grants.append(Create(request.ticket, stop))
    return grants


def _warm(idle: list[tuple[str, tuple]], shape: tuple) -> int | None:
    """The place in ``idle`` of the warmest TaskManager of ``shape``, if any."""
    return next((i for i, (_, idle_shape) in enumerate(idle) if idle_shape == shape), None)


def _stop_for(slots: int, free_cpus: float, idle: list) -> tuple[tuple[str, ...], float]:
    """The idle TaskManagers to stop (the coldest first, taken off ``idle``) to free
    ``slots`` CPUs, and the CPUs free once the new one holds them."""
    stop = []
    while free_cpus < slots and idle:
        tm_id, shape = idle.pop()
        stop.append(tm_id)
        free_cpus += shape[0]
    return tuple(stop), free_cpus - slots
