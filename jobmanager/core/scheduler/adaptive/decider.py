"""Deciding a vertex's parallelism and the input ranges of its subtasks, from plain numbers.

The formula is Flink's: a user-set parallelism is kept; otherwise ``ceil(non-broadcast bytes /
avg-data-volume-per-task)`` clamped to ``[min, max]`` (the vertex's max parallelism narrows
both), with zero bytes giving the minimum. Broadcast bytes do not count. Where
``min-data-volume-per-task`` is set, a vertex whose bytes fill fewer tasks than the job's slots
gets smaller tasks (``spread_over_slots``). All-to-all inputs are then split into ranges
balanced by bytes: greedy packing under the volume per task, with the limit bisected up when it
would make more ranges than the formula's parallelism (pairs of subpartitions just above the
limit would otherwise nearly double the count: 1 GiB in 128 subpartitions gave 115 tasks, not
64) and down to reach min-parallelism; this may settle on fewer tasks when subpartitions are
lumpy. Pointwise inputs fix the parallelism and are balanced into exactly that many consumers; a
broadcast input is read whole by every consumer. Every step leaves a note in the decision's
explanation.
"""

from __future__ import annotations

import math
from dataclasses import replace

from jobmanager.core.executiongraph.inputs import BroadcastInputInfo
from jobmanager.core.scheduler.adaptive.alltoall import balance_all_to_all
from jobmanager.core.scheduler.adaptive.decision import (
    DeciderSettings,
    InputStats,
    VertexDecision,
)
from jobmanager.core.scheduler.adaptive.pointwise import balance_pointwise
from jobmanager.messages.events import Explanation

__all__ = [
    "broadcast_infos",
    "decide_parallelism",
    "decide_vertex",
    "describe_bytes",
    "spread_over_slots",
    "starting_parallelism",
]


def describe_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def decide_parallelism(
    input_bytes: int,
    has_non_broadcast_input: bool,
    vertex_max_parallelism: int,
    settings: DeciderSettings,
) -> tuple[int, int, int, float, list[str]]:
    """The byte formula. Returns (parallelism, min, max, raw value, clamps applied)."""
    low, high, clamps = settings.min_parallelism, settings.max_parallelism, []
    if vertex_max_parallelism < low:
        clamps.append(f"min-parallelism {low} lowered to the vertex max {vertex_max_parallelism}")
        low = vertex_max_parallelism
    if vertex_max_parallelism < high:
        clamps.append(f"max-parallelism {high} lowered to the vertex max {vertex_max_parallelism}")
        high = vertex_max_parallelism
    if not has_non_broadcast_input or input_bytes == 0:
        return low, low, high, 0.0, clamps + [f"no non-broadcast bytes: the minimum {low}"]
    raw = input_bytes / settings.data_volume_per_task
    parallelism = math.ceil(raw)
    if parallelism < low:
        clamps.append(f"raised from {parallelism} to min-parallelism {low}")
        parallelism = low
    elif parallelism > high:
        clamps.append(f"lowered from {parallelism} to max-parallelism {high}")
        parallelism = high
    return parallelism, low, high, raw, clamps


def spread_over_slots(settings: DeciderSettings, input_bytes: int) -> DeciderSettings:
    """``settings`` with the volume per task lowered to ``input_bytes / slots``, but not under
    ``min_data_volume_per_task``, where ``input_bytes`` would fill fewer tasks than the job's
    slots (both set), where that gives it more tasks: as Spark coalesces a shuffle's partitions
    (``parallelismFirst``), so a vertex of 32 MiB does not run as one task on one of two cores
    at 64 MiB a task. Applying it twice gives the same settings."""
    least, slots = settings.min_data_volume_per_task, settings.slots
    if least is None or not slots or input_bytes <= 0:
        return settings
    volume = max(least, min(settings.data_volume_per_task, -(-input_bytes // slots)))
    if -(-input_bytes // volume) <= -(-input_bytes // settings.data_volume_per_task):
        return settings  # no more tasks for it
    return replace(settings, data_volume_per_task=volume)


def decide_vertex(
    inputs: list[InputStats],
    user_parallelism: int | None,
    vertex_max_parallelism: int,
    settings: DeciderSettings,
) -> VertexDecision:
    pointwise, all_to_all = _split_read(inputs)
    input_bytes = sum(i.total for i in pointwise + all_to_all)
    broadcast_bytes = sum(i.total for i in inputs if i.broadcast)
    parallelism, low, raw, clamps, text = starting_parallelism(
        input_bytes,
        bool(pointwise or all_to_all),
        user_parallelism,
        vertex_max_parallelism,
        settings,
    )
    if user_parallelism is None:
        settings = spread_over_slots(settings, input_bytes)  # the ranges' limit, as the formula's
    if broadcast_bytes:
        text.append(f"{describe_bytes(broadcast_bytes)} broadcast, not counted")
    infos: dict = {}
    if all_to_all:
        # a pointwise input fixes the parallelism: the all-to-all ones are balanced to it
        parallelism, balanced, notes = _balance_all_to_all_inputs(
            all_to_all, input_bytes, parallelism, parallelism if pointwise else low, settings
        )
        infos.update(balanced)
        text.extend(notes)
    infos.update(_pointwise_infos(pointwise, parallelism, text))
    infos.update(broadcast_infos(inputs, parallelism))
    ordered = {i.result: infos[i.result] for i in inputs}
    explanation = Explanation(
        "; ".join(text), input_bytes, broadcast_bytes, round(raw, 4), tuple(clamps)
    )
    return VertexDecision(parallelism, ordered, explanation)


def starting_parallelism(
    input_bytes: int,
    has_non_broadcast_input: bool,
    user_parallelism: int | None,
    vertex_max_parallelism: int,
    settings: DeciderSettings,
) -> tuple[int, int, float, list[str], list[str]]:
    """The parallelism before any input is balanced, with its lower bound, the formula's raw
    value, the clamps and the first note: a user-set parallelism is the user's decision, so
    the byte formula only runs without one. Returns (parallelism, min, raw, clamps, notes)."""
    if user_parallelism is not None:
        fixed = f"parallelism {user_parallelism} is fixed"
        return user_parallelism, user_parallelism, 0.0, [], [fixed]
    spread = spread_over_slots(settings, input_bytes) if has_non_broadcast_input else settings
    parallelism, low, high, raw, clamps = decide_parallelism(
        input_bytes, has_non_broadcast_input, vertex_max_parallelism, spread
    )
    volume = spread.data_volume_per_task
    note = (
        f"{describe_bytes(input_bytes)} of input / {describe_bytes(volume)} per task "
        f"= {raw:.2f} -> {parallelism} within [{low}, {high}]"
    )
    if spread is not settings:
        note += (
            f" (tasks of {describe_bytes(volume)}, not "
            f"{describe_bytes(settings.data_volume_per_task)}, to spread over the job's "
            f"{settings.slots} slots)"
        )
    return parallelism, low, raw, clamps, [note]


def _balance_all_to_all_inputs(
    all_to_all: list[InputStats],
    input_bytes: int,
    parallelism: int,
    low: int,
    settings: DeciderSettings,
) -> tuple[int, dict, list[str]]:
    """Ranges balanced by bytes may settle on another parallelism than the formula's. A range
    is limited to the all-to-all inputs' share of the volume per task, since each subtask also
    reads its pointwise inputs. Returns (parallelism, input infos, notes)."""
    volume = settings.data_volume_per_task
    share = sum(i.total for i in all_to_all)
    limit = max(1, volume * share // input_bytes) if input_bytes else volume
    # at most the formula's parallelism: packing under exactly the volume per task can
    # almost double the count when pairs of subpartitions sit just above it
    balanced = balance_all_to_all(
        all_to_all, parallelism, low, max(low, parallelism), limit, settings
    )
    notes = []
    if balanced.parallelism != parallelism:
        notes.append(f"ranges settle on parallelism {balanced.parallelism}")
    notes.extend(balanced.notes)
    return balanced.parallelism, balanced.infos, notes


def _split_read(inputs: list[InputStats]) -> tuple[list[InputStats], list[InputStats]]:
    """The inputs not broadcast: the pointwise ones and the all-to-all ones."""
    pointwise, all_to_all = [], []
    for stats in inputs:
        if not stats.broadcast:
            (pointwise if stats.pointwise else all_to_all).append(stats)
    return pointwise, all_to_all


def _pointwise_infos(pointwise: list[InputStats], parallelism: int, text: list[str]) -> dict:
    """Each pointwise input balanced over the tasks, with a note on it in ``text``."""
    infos = {}
    for stats in pointwise:
        info, note = balance_pointwise(stats, parallelism)
        infos[stats.result] = info
        text.append(f"{stats.result!r}: {note}")
    return infos


def broadcast_infos(inputs: list[InputStats], parallelism: int) -> dict:
    """Every consumer reads a broadcast input whole, so only the final parallelism matters."""
    return {
        stats.result: BroadcastInputInfo(stats.num_partitions, parallelism)
        for stats in inputs
        if stats.broadcast
    }
