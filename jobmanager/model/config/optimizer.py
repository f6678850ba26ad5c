"""The SQL planner's options (``table.optimizer.*``) and the values derived from them: which joins
broadcast when planned, and which are left to the run time (FLIP-470)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobmanager.model.config.option import Option, _choice, _memory_or_off, _names

__all__ = [
    "ADAPTIVE_BROADCAST_JOIN_STRATEGY",
    "AUTO",
    "BROADCAST_THRESHOLD",
    "NONE",
    "READ_WHOLE_THRESHOLD",
    "RULES_DISABLED",
    "RUNTIME_ONLY",
    "broadcast_join_strategy",
    "joins_decided_at_run_time",
    "static_broadcast_threshold",
]

BROADCAST_THRESHOLD = Option(
    "table.optimizer.join.broadcast-threshold",
    _memory_or_off,
    10 << 20,
    "A SQL query's join sends a side whole to every task of the other when the "
    "side's listed bytes (the compressed columns it reads) are at most this; -1 "
    "never does. (Flink: 1 MB of its own estimate; Tidal: Spark's 10 MB, of bytes "
    "as Spark's estimate counts them.)",
)

READ_WHOLE_THRESHOLD = Option(
    "table.optimizer.join.read-whole-threshold",
    _memory_or_off,
    1 << 20,
    "A join's side sent whole to every task of the other side, when it reads one "
    "table (filtered and projected only) of at most this many listed bytes and the "
    "other side's tasks read a table too, is read by each of those tasks in its own "
    "Spark query, as Spark's own plan reads it, not by a task of its own; -1 never.",
)

# the adaptive broadcast-join strategies (FLIP-470)
AUTO, RUNTIME_ONLY, NONE = "AUTO", "RUNTIME_ONLY", "NONE"

ADAPTIVE_BROADCAST_JOIN_STRATEGY = Option(
    "table.optimizer.adaptive-broadcast-join.strategy",
    _choice(AUTO, RUNTIME_ONLY, NONE, aliases={"runtime-only": RUNTIME_ONLY}),
    AUTO,
    "AUTO: a join is broadcast when planned (a side's listed bytes under "
    "table.optimizer.join.broadcast-threshold) or, failing that, at run time, when "
    "a side it may broadcast produced at most the threshold's real bytes (else it "
    "stays shuffled, built on its smaller side); RUNTIME_ONLY: only at run time, "
    "from the bytes produced; NONE: never at run time (FLIP-470).",
)

RULES_DISABLED = Option(
    "table.optimizer.rules.disabled",
    _names,
    (),
    "The SQL planner's logical rules left out, by name, comma-separated (empty: none); "
    "`tidal sql --explain --rules` lists them and what each changed. The planner "
    "refuses a name no rule has.",
)


def broadcast_join_strategy(config: Mapping[str, Any]) -> str:
    """AUTO, RUNTIME_ONLY or NONE, read by the option's own parse (any case, with dashes);
    AUTO, Flink's default, from a plain mapping that does not set it."""
    value = config.get(ADAPTIVE_BROADCAST_JOIN_STRATEGY.key)
    if value is None:
        return AUTO
    return ADAPTIVE_BROADCAST_JOIN_STRATEGY.value(value)


def static_broadcast_threshold(config: Mapping[str, Any]) -> int:
    """The broadcast threshold the planner cuts stages with: -1 (never from the listing) under
    RUNTIME_ONLY, so every equi-join is shuffled and left to the run time; else the option's.
    A join without keys broadcasts whatever the threshold, so it is unaffected."""
    if broadcast_join_strategy(config) == RUNTIME_ONLY:
        return -1
    return config[BROADCAST_THRESHOLD.key]


def joins_decided_at_run_time(config: Mapping[str, Any]) -> bool:
    """Whether the JobManager may decide a marked join from the bytes its sides wrote: under
    every strategy but NONE."""
    return broadcast_join_strategy(config) != NONE
