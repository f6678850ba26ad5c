"""Restart back-off: may the job restart after a failure, and after how long?

The strategies never read a clock: each failure arrives with the time the shell saw it, and the
delay leaves as a timer command. Jitter comes from a generator seeded per failure, so replaying
the same failures gives the same delays.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Protocol

from jobmanager.model.config import (
    EXPONENTIAL_ATTEMPTS,
    EXPONENTIAL_BACKOFF_MULTIPLIER,
    EXPONENTIAL_INITIAL_BACKOFF,
    EXPONENTIAL_JITTER_FACTOR,
    EXPONENTIAL_MAX_BACKOFF,
    EXPONENTIAL_RESET_BACKOFF_THRESHOLD,
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    RESTART_STRATEGY,
)

if TYPE_CHECKING:
    from jobmanager.model.config import Configuration

__all__ = [
    "ExponentialDelayRestartBackoffTimeStrategy",
    "make_restart_backoff",
    "FixedDelayRestartBackoffTimeStrategy",
    "NoRestartBackoffTimeStrategy",
    "RestartBackoffTimeStrategy",
]


class RestartBackoffTimeStrategy(Protocol):
    def notify_failure(self, time_ms: int) -> None: ...

    def can_restart(self) -> bool: ...

    def backoff_ms(self) -> int: ...

    def describe(self) -> tuple: ...

    def export(self) -> tuple:
        """What it counted so far, for a snapshot; ``restore`` takes it back."""
        ...

    def restore(self, image: tuple) -> None: ...


class NoRestartBackoffTimeStrategy:
    def notify_failure(self, time_ms: int) -> None:
        pass

    def can_restart(self) -> bool:
        return False

    def backoff_ms(self) -> int:
        return 0

    def describe(self) -> tuple:
        return ("none",)

    def export(self) -> tuple:
        return ()

    def restore(self, image: tuple) -> None:
        pass

    def __str__(self) -> str:
        return "no restarts"


class FixedDelayRestartBackoffTimeStrategy:
    """Up to ``attempts`` restarts, each after the same delay."""

    def __init__(self, attempts: int, delay_ms: int) -> None:
        self.attempts = attempts
        self.delay_ms = delay_ms
        self.failures = 0

    def notify_failure(self, time_ms: int) -> None:
        self.failures += 1

    def can_restart(self) -> bool:
        return self.failures <= self.attempts

    def backoff_ms(self) -> int:
        return self.delay_ms

    def describe(self) -> tuple:
        return ("fixed-delay", self.failures)

    def export(self) -> tuple:
        return (self.failures,)

    def restore(self, image: tuple) -> None:
        (self.failures,) = image

    def __str__(self) -> str:
        return f"fixed delay {self.delay_ms} ms, {self.attempts} attempts"


class ExponentialDelayRestartBackoffTimeStrategy:
    """Flink's exponential delay: the back-off grows by ``multiplier`` per failure up to
    ``max_ms``, with +/- ``jitter`` of it at random, and starts over after ``reset_ms`` without
    a failure. Failures that arrive while a restart is already pending (within the current
    back-off window) count as one attempt, as in Flink 1.19, so a TaskManager taking many
    subtasks down costs one attempt, not one per subtask."""

    def __init__(
        self,
        initial_ms: int,
        max_ms: int,
        multiplier: float,
        reset_ms: int,
        jitter: float,
        attempts: int,
        seed: int = 0,
    ) -> None:
        self.initial_ms = initial_ms
        self.max_ms = max_ms
        self.multiplier = multiplier
        self.reset_ms = reset_ms
        self.jitter = jitter
        self.attempts = attempts
        self.seed = seed
        self.attempt = 0
        self.current_ms = 0
        self.next_restart_at = -1
        self.last_failure_at = -1

    def notify_failure(self, time_ms: int) -> None:
        if self.last_failure_at >= 0 and time_ms - self.last_failure_at >= self.reset_ms:
            self.attempt = 0
            self.current_ms = 0
        self.last_failure_at = time_ms
        if time_ms < self.next_restart_at:
            return
        self.attempt += 1
        if self.current_ms == 0:
            self.current_ms = self.initial_ms
        else:
            self.current_ms = min(int(self.current_ms * self.multiplier), self.max_ms)
        self.next_restart_at = time_ms + self.backoff_ms()

    def can_restart(self) -> bool:
        return self.attempt <= self.attempts

    def backoff_ms(self) -> int:
        if self.jitter <= 0:
            return self.current_ms
        spread = self.current_ms * self.jitter
        rng = random.Random(self.seed * 1_000_003 + self.attempt)
        return max(0, int(self.current_ms + rng.uniform(-spread, spread)))

    def describe(self) -> tuple:
        return ("exponential-delay", self.attempt, self.current_ms, self.next_restart_at)

    def export(self) -> tuple:
        return (self.attempt, self.current_ms, self.next_restart_at, self.last_failure_at)

    def restore(self, image: tuple) -> None:
        self.attempt, self.current_ms, self.next_restart_at, self.last_failure_at = image

    def __str__(self) -> str:
        return (
            f"exponential delay from {self.initial_ms} ms to {self.max_ms} ms "
            f"(x{self.multiplier}), {self.attempts} attempts"
        )


def make_restart_backoff(config: Configuration, seed: int = 0) -> RestartBackoffTimeStrategy:
    kind = config[RESTART_STRATEGY.key]
    if kind == "none":
        return NoRestartBackoffTimeStrategy()
    if kind == "fixed-delay":
        return FixedDelayRestartBackoffTimeStrategy(
            config[FIXED_DELAY_ATTEMPTS.key],
            config[FIXED_DELAY_DELAY.key],
        )
    return ExponentialDelayRestartBackoffTimeStrategy(
        initial_ms=config[EXPONENTIAL_INITIAL_BACKOFF.key],
        max_ms=config[EXPONENTIAL_MAX_BACKOFF.key],
        multiplier=config[EXPONENTIAL_BACKOFF_MULTIPLIER.key],
        reset_ms=config[EXPONENTIAL_RESET_BACKOFF_THRESHOLD.key],
        jitter=config[EXPONENTIAL_JITTER_FACTOR.key],
        attempts=config[EXPONENTIAL_ATTEMPTS.key],
        seed=seed,
    )
