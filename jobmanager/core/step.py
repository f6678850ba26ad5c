"""What the core answers an event with: the events to record after it, and the commands.

A decision the core makes while it applies an event (a vertex's parallelism and subpartition
ranges, from the bytes its producers reported) is an event of its own: the shell appends it to
the job's log right after the event that led to it, so a replay applies the decision from the
log and never makes it again. The commands are what the shell carries out, each one holding
what it needs to act.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Step"]


@dataclass(frozen=True, slots=True)
class Step:
    events: tuple[object, ...] = ()
    commands: tuple[object, ...] = ()
