"""What the planner's rules read besides the plan, computed once from the configuration."""

from __future__ import annotations

from dataclasses import dataclass

from jobmanager.model.config import Configuration
from jobmanager.planner.logical import IdAllocator
from jobmanager.planner.physical.joinmarks import broadcast_strategy, static_threshold

__all__ = ["BROADCAST_THRESHOLD", "READ_WHOLE_THRESHOLD", "SKEW_STRATEGY", "RuleContext"]

BROADCAST_THRESHOLD = "table.optimizer.join.broadcast-threshold"
READ_WHOLE_THRESHOLD = "table.optimizer.join.read-whole-threshold"
# none, auto or forced: forced plans a hash exchange after a shuffled join where an operator
# in the join's stage would rely on its hashing, so that the join's skew may still be cut
SKEW_STRATEGY = "execution.batch.adaptive.skewed-join-optimization.strategy"


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
        threshold, strategy = config[BROADCAST_THRESHOLD], broadcast_strategy(config)
        return cls(
            ids,
            threshold,
            static_threshold(threshold, strategy),
            strategy,
            config[READ_WHOLE_THRESHOLD],
        )
