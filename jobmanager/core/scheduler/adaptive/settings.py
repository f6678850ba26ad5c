"""What the adaptive scheduler reads from the job's configuration: the decider's settings and
what a source vertex's sources are told when they infer their parallelism (FLIP-379)."""

from __future__ import annotations

from jobmanager.core.scheduler.adaptive.decision import DeciderSettings
from jobmanager.model.config import Configuration
from jobmanager.model.inference import (
    DynamicFilteringInfo,
    InferenceContext,
    source_upper_bound,
)

__all__ = ["decider_settings", "source_bound", "source_inference_context", "source_volume"]

_ADAPTIVE = "execution.batch.adaptive.auto-parallelism."
_SKEW = "execution.batch.adaptive.skewed-join-optimization."


def decider_settings(config: Configuration, slots: int | None = None) -> DeciderSettings:
    """``slots``: the most slots the job can hold at once, from its submission."""
    return DeciderSettings(
        min_parallelism=config[_ADAPTIVE + "min-parallelism"],
        max_parallelism=config[_ADAPTIVE + "max-parallelism"],
        data_volume_per_task=config[_ADAPTIVE + "avg-data-volume-per-task"],
        skewed_factor=config[_SKEW + "skewed-factor"],
        skewed_threshold=config[_SKEW + "skewed-threshold"],
        split_skew=config[_SKEW + "strategy"] != "none",  # forced differs in the planner only
        min_data_volume_per_task=config[_ADAPTIVE + "min-data-volume-per-task"],
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
    if not config.is_set(_ADAPTIVE + "source-data-volume-per-task") and config.is_set(
        _ADAPTIVE + "avg-data-volume-per-task"
    ):
        return config[_ADAPTIVE + "avg-data-volume-per-task"]
    return config[_ADAPTIVE + "source-data-volume-per-task"]


def source_bound(c: Configuration, vertex_max: int) -> int:
    return source_upper_bound(
        c[_ADAPTIVE + "default-source-parallelism"],
        c[_ADAPTIVE + "max-parallelism"] if c.is_set(_ADAPTIVE + "max-parallelism") else None,
        c["parallelism.default"] if c.is_set("parallelism.default") else None,
        c[_ADAPTIVE + "max-parallelism"],
        vertex_max,
    )
