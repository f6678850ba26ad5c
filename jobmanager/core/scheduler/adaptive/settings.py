"""What the adaptive scheduler reads from the job's configuration: the decider's settings and
what a source vertex's sources are told when they infer their parallelism (FLIP-379)."""

from __future__ import annotations

from jobmanager.core.scheduler.adaptive.decision import DeciderSettings
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    DEFAULT_SOURCE_PARALLELISM,
    MAX_PARALLELISM,
    MIN_DATA_VOLUME_PER_TASK,
    MIN_PARALLELISM,
    PARALLELISM_DEFAULT,
    SKEWED_FACTOR,
    SKEWED_JOIN_STRATEGY,
    SKEWED_THRESHOLD,
    SOURCE_DATA_VOLUME_PER_TASK,
    Configuration,
)
from jobmanager.model.inference import (
    DynamicFilteringInfo,
    InferenceContext,
    source_upper_bound,
)

__all__ = ["decider_settings", "source_bound", "source_inference_context", "source_volume"]


def decider_settings(config: Configuration, slots: int | None = None) -> DeciderSettings:
    """``slots``: the most slots the job can hold at once, from its submission."""
    return DeciderSettings(
        min_parallelism=config[MIN_PARALLELISM.key],
        max_parallelism=config[MAX_PARALLELISM.key],
        data_volume_per_task=config[AVG_DATA_VOLUME_PER_TASK.key],
        skewed_factor=config[SKEWED_FACTOR.key],
        skewed_threshold=config[SKEWED_THRESHOLD.key],
        split_skew=config[SKEWED_JOIN_STRATEGY.key] != "none",  # forced differs in the planner only
        min_data_volume_per_task=config[MIN_DATA_VOLUME_PER_TASK.key],
        slots=slots,
    )


def source_inference_context(
    config: Configuration,
    vertex_max: int,
    slots: int | None,
    filters: tuple[DynamicFilteringInfo, ...] = (),
) -> InferenceContext:
    """What a source vertex's sources are told (FLIP-379's context, and the job's slots); the
    data volume per task is the sources' own where one is set."""
    return InferenceContext(source_bound(config, vertex_max), source_volume(config), filters, slots)


def source_volume(config: Configuration) -> int:
    """The source option; where only the volume of every task is set, that one: a job that
    sizes its tasks sizes its sources' too."""
    if not config.is_set(SOURCE_DATA_VOLUME_PER_TASK.key) and config.is_set(
        AVG_DATA_VOLUME_PER_TASK.key
    ):
        return config[AVG_DATA_VOLUME_PER_TASK.key]
    return config[SOURCE_DATA_VOLUME_PER_TASK.key]


def source_bound(c: Configuration, vertex_max: int) -> int:
    return source_upper_bound(
        c[DEFAULT_SOURCE_PARALLELISM.key],
        c[MAX_PARALLELISM.key] if c.is_set(MAX_PARALLELISM.key) else None,
        c[PARALLELISM_DEFAULT.key] if c.is_set(PARALLELISM_DEFAULT.key) else None,
        c[MAX_PARALLELISM.key],
        vertex_max,
    )
