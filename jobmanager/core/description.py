"""A JobManager state as plain values: what a replay, a snapshot's restore and the live run
are compared by. It reads a ``JobManagerState`` and imports nothing of it, so the state can
offer it as ``describe()``."""

from __future__ import annotations

__all__ = ["describe"]


def describe(state) -> tuple:
    """Everything that makes this state what it is, as plain values, for comparing a replay
    with the live run."""
    vertices = tuple(
        (
            v.label,
            v.state.value,
            v.attempt,
            None if v.slot is None else (v.slot.task_manager, v.slot.index),
        )
        for v in state.graph.vertices()
    )
    partitions = tuple(
        (str(p.id), p.state.value, p.location)
        for result in state.graph.results.values()
        for p in result.partitions
    )
    return (
        state.status.value,
        state.failure_cause,
        vertices,
        partitions,
        tuple(sorted(state.strategy.scheduled)),
        tuple(sorted(state.release.unfinished_consumer_regions.items())),
        state.slots.describe(),
        state.backoff.describe(),
        state.restarts.describe(),
        state.growth.describe() if state.growth is not None else (),
        state.speculation.describe(),
        tuple(sorted(state.departed)),
        tuple(state.losses),
        tuple(
            (str(p.id), p.size, p.checksum)
            for result in state.graph.results.values()
            for p in result.partitions
            if p.size
        ),
    )
