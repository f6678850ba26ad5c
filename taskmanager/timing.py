"""Where a task's time goes: the phases a task passes through, timed as they happen.

A task's duration is split into the phases it spends it in (fetching its code and shuffle
descriptors, reading its input, writing Spark's temporary input, Spark planning the query,
Spark running it and handing back Arrow, running an Arrow function, partitioning and writing
the output); what no phase claims is ``other``, so the parts add up to the duration. The time
it waited in its slot before it started is ``queued``, beside the duration. The numbers go to
the JobManager in the task's metrics; the job's status sums them per vertex, and
``benchmarks/tpch.py`` prints where the time went.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PHASES", "TaskClock"]

PHASES = (
    "code",
    "read_input",
    "spark_input",
    "spark_plan",
    "spark_run",
    "arrow_function",
    "write_output",
    "other",
)


class TaskClock:
    """Times one task's phases; not thread-safe (a task runs on one thread)."""

    def __init__(self, clock=time.perf_counter) -> None:
        self._clock = clock
        self.started = clock()
        self._spent: dict[str, float] = {}
        self.spark_jobs = 0  # Spark jobs the task's queries ran

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began = self._clock()
        try:
            yield
        finally:
            self._spent[name] = self._spent.get(name, 0.0) + self._clock() - began

    def breakdown(self) -> tuple[tuple[str, int], ...]:
        """(phase, milliseconds) of the phases the task went through, in ``PHASES`` order, and
        ``other``: the rest of its duration so far."""
        total = self._clock() - self.started
        parts = [(name, self._spent[name]) for name in PHASES if name in self._spent]
        other = max(0.0, total - sum(seconds for _, seconds in parts))
        return tuple((name, round(seconds * 1000)) for name, seconds in parts) + (
            ("other", round(other * 1000)),
        )

    def elapsed_ms(self) -> int:
        return int((self._clock() - self.started) * 1000)
