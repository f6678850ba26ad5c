"""Every option by its key, and the pairs of options that may not contradict each other.

A new option is a constant in its area's module and a name in that module's ``__all__``, from
which ``OPTIONS`` and the package's exports are both built; ``tests/test_config_literals.py``
names any step missed."""

from __future__ import annotations

from types import ModuleType

import jobmanager.model.config.cluster as cluster
import jobmanager.model.config.optimizer as optimizer
import jobmanager.model.config.recovery as recovery
import jobmanager.model.config.scheduling as scheduling
import jobmanager.model.config.stores as stores
from jobmanager.model.config.cluster import HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT
from jobmanager.model.config.option import Option
from jobmanager.model.config.recovery import EXPONENTIAL_INITIAL_BACKOFF, EXPONENTIAL_MAX_BACKOFF
from jobmanager.model.config.scheduling import MAX_PARALLELISM, MIN_PARALLELISM

__all__ = ["OPTIONS"]


def options_exported_by(*areas: ModuleType) -> dict[str, Option]:
    """Each option an area module exports, by its key, in the order the areas and their modules
    declare them: the area's ``__all__`` is the one list of what it exports."""
    return {
        value.key: value
        for area in areas
        for name, value in vars(area).items()
        if name in area.__all__ and isinstance(value, Option)
    }


OPTIONS: dict[str, Option] = options_exported_by(cluster, stores, recovery, scheduling, optimizer)

_CONTRADICTIONS = (
    (MIN_PARALLELISM.key, MAX_PARALLELISM.key,
     lambda low, high: low <= high, "may not be above"),
    (EXPONENTIAL_INITIAL_BACKOFF.key, EXPONENTIAL_MAX_BACKOFF.key,
     lambda low, high: low <= high, "may not be above"),
    (HEARTBEAT_INTERVAL.key, HEARTBEAT_TIMEOUT.key,
     lambda interval, timeout: interval < timeout, "must be below"),
)  # fmt: skip
