"""What the planner's rules read besides the plan, computed once from the configuration."""

from __future__ import annotations

from dataclasses import dataclass

from jobmanager.model.config import (
    BROADCAST_THRESHOLD,
    READ_WHOLE_THRESHOLD,
    Configuration,
    broadcast_join_strategy,
    static_broadcast_threshold,
)
from jobmanager.planner.logical import IdAllocator

__all__ = ["RuleContext"]


@dataclass(frozen=True, slots=True)
class RuleContext:
    """``ids``: the query's column ids, for the columns a rule makes; ``broadcast_threshold``:
    the listed bytes under which a join's side is sent whole (-1: never); ``static_threshold``:
    the one the plan is cut with (-1 where only the run time broadcasts); ``strategy``: the
    adaptive broadcast strategy (AUTO, RUNTIME_ONLY or NONE); ``read_whole``: the most listed
    bytes of a table its joins' tasks read whole (-1: never)."""

    ids: IdAllocator
    broadcast_threshold: int = -1
    static_threshold: int = -1
    strategy: str = "AUTO"
    read_whole: int = -1

    @classmethod
    def from_config(cls, config: Configuration, ids: IdAllocator) -> RuleContext:
        return cls(
            ids,
            config[BROADCAST_THRESHOLD.key],
            static_broadcast_threshold(config),
            broadcast_join_strategy(config),
            config[READ_WHOLE_THRESHOLD.key],
        )
