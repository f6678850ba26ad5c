"""Deciding a global sort's key ranges from its producers' samples (a range exchange).

A vertex reading a range-partitioned input sorts it globally: task k keeps the keys in
``[b_(k-1), b_k)``, so its output comes after task k-1's, and reading the tasks' outputs in
subtask order gives the global order. Nobody sampled the data beforehand: each producer sorted
its own output, cut it into chunks of about equal rows, one per subpartition, and reported each
chunk's lowest key and its own highest key (``ProducedPartition.range_bounds``, encoded so that
byte order is the sort order: ``shuffle.keyorder``). Once every producer finished:

- the parallelism comes from the byte formula, as for any vertex (a small input: one task);
- the bounds are picked among the chunks' lowest keys so the bytes between two bounds are
  about the volume per task (a chunk's bytes counted at its lowest key; ties may leave fewer
  distinct bounds, then fewer tasks);
- task k reads, from every producer, the consecutive chunks whose keys may overlap its range:
  chunk j holds keys in ``[low_j, low_(j+1)]`` (its successor's lowest key, or the producer's
  highest; closed, since equal keys may straddle a cut). A chunk straddling a bound is read by
  both tasks, each keeping its own part (``InputGateDeploymentDescriptor.lower_key``), so no
  row is kept twice and none is lost.

The bounds ride in ``VertexParallelismDecided.range_bounds``, the chunks in its input infos, so
a replay applies both and never decides again. Pure functions of the samples.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from jobmanager.core.executiongraph.inputs import (
    ExecutionVertexInputInfo,
    ExplicitInputInfo,
    InputSlice,
)
from jobmanager.core.scheduler.adaptive.decider import (
    broadcast_infos,
    describe_bytes,
    starting_parallelism,
)
from jobmanager.core.scheduler.adaptive.decision import DeciderSettings, InputStats, VertexDecision
from jobmanager.messages.events import Explanation
from shuffle.ranges import IndexRange

__all__ = ["RangeSorts", "Sample", "decide_range_vertex", "key_range", "range_bounds", "reads_of"]

Sample = tuple[tuple[bytes, ...], tuple[int, ...]]
"""One producer's chunks: their lowest keys then the highest key (c + 1 keys), their bytes (c)."""


def key_range(bounds: tuple[bytes, ...], k: int) -> tuple[bytes | None, bytes | None]:
    """Task k's keys: at least the first (None: unbounded), below the second (None: unbounded)."""
    return (bounds[k - 1] if k > 0 else None, bounds[k] if k < len(bounds) else None)


def range_bounds(samples: dict[int, Sample], parallelism: int) -> list[bytes]:
    """At most ``parallelism - 1`` increasing bounds among the chunks' lowest keys, balanced by
    bytes: a bound goes before the first chunk past whose middle the bytes reach the next
    multiple of total / parallelism."""
    weights: dict[bytes, int] = {}
    for keys, sizes in samples.values():
        for low, size in zip(keys, sizes):
            weights[low] = weights.get(low, 0) + size
    total = sum(weights.values())
    bounds: list[bytes] = []
    seen = 0
    for low in sorted(weights):
        size = weights[low]
        if (
            len(bounds) < parallelism - 1
            and seen > 0
            and (2 * seen + size) * parallelism >= (2 * (len(bounds) + 1) * total)
        ):
            bounds.append(low)
        seen += size
    return bounds


def _chunks_in_range(samples: dict[int, Sample], lower: bytes | None, upper: bytes | None):
    """(producer, first chunk, last chunk) of each producer with chunks that may hold keys in
    ``[lower, upper)``, in producer order."""
    for producer in sorted(samples):
        keys = samples[producer][0]
        chunks = len(keys) - 1
        first = 0 if lower is None else bisect_left(keys, lower) - 1
        last = chunks - 1 if upper is None else bisect_left(keys, upper, 0, chunks) - 1
        if max(first, 0) <= last and first < chunks:
            yield producer, max(first, 0), last


def _fitted_bounds(bounds: list, parallelism: int, user_parallelism: int | None, notes: list[str]):
    """The bounds and parallelism: as many tasks as the keys allow ranges, unless the user
    fixed the parallelism (the bounds then padded with the last one)."""
    if user_parallelism is not None:
        return bounds + [bounds[-1] if bounds else b""] * (
            parallelism - 1 - len(bounds)
        ), parallelism
    if len(bounds) + 1 < parallelism:
        notes.append(f"the keys allow {len(bounds) + 1} ranges")
    return bounds, len(bounds) + 1


def reads_of(
    samples: dict[int, Sample], lower: bytes | None, upper: bytes | None, stats: InputStats
) -> ExecutionVertexInputInfo:
    """The chunks of every producer that may hold keys in ``[lower, upper)``: one slice per run
    of consecutive producers reading the same chunks. A task whose range holds nothing (a
    fixed parallelism above what the keys allow) reads one subpartition it keeps nothing of,
    so it still has its input's columns; with no sample at all (no producer wrote a row)
    every task reads everything, which is nothing."""
    slices: list[InputSlice] = []
    for producer, first, last in _chunks_in_range(samples, lower, upper):
        previous = slices[-1] if slices else None
        if (
            previous is not None
            and previous.partitions.end == producer - 1
            and (previous.subpartitions.start, previous.subpartitions.end) == (first, last)
        ):
            slices[-1] = InputSlice(
                IndexRange(previous.partitions.start, producer), previous.subpartitions
            )
        else:
            slices.append(InputSlice(IndexRange(producer, producer), IndexRange(first, last)))
    if not slices:
        last = len(stats.subpartition_bytes) - 1 if not samples else 0
        partitions = stats.num_partitions - 1 if not samples else 0
        slices.append(InputSlice(IndexRange(0, partitions), IndexRange(0, last)))
    return ExecutionVertexInputInfo(tuple(slices))


def decide_range_vertex(
    inputs: list[InputStats],
    ranged: str,
    samples: dict[int, Sample],
    user_parallelism: int | None,
    vertex_max_parallelism: int,
    settings: DeciderSettings,
) -> VertexDecision:
    """The decision of a vertex whose one non-broadcast input, ``ranged``, is range
    partitioned (see the module). A parallelism fixed by the user is kept: the bounds are
    padded with the last one (tasks of empty ranges), or, with no sample at all, every task
    but the last has an empty range."""
    stats = next(s for s in inputs if s.result == ranged)
    parallelism, _, raw, clamps, notes = starting_parallelism(
        stats.total, True, user_parallelism, vertex_max_parallelism, settings
    )
    bounds, parallelism = _fitted_bounds(
        range_bounds(samples, parallelism), parallelism, user_parallelism, notes
    )
    infos: dict = {
        ranged: ExplicitInputInfo(
            tuple(
                reads_of(samples, *key_range(tuple(bounds), k), stats) for k in range(parallelism)
            )
        )
    }
    infos.update(broadcast_infos(inputs, parallelism))
    broadcast_bytes = sum(other.total for other in inputs if other.broadcast)
    notes.append(
        f"{ranged!r}: sorted by key ranges, {len(bounds)} bounds picked from "
        f"{sum(len(s[1]) for s in samples.values())} chunks of {len(samples)} "
        f"producers, balanced by bytes"
    )
    if broadcast_bytes:
        notes.append(f"{describe_bytes(broadcast_bytes)} broadcast, not counted")
    explanation = Explanation(
        "; ".join(notes), stats.total, broadcast_bytes, round(raw, 4), tuple(clamps)
    )
    ordered = {s.result: infos[s.result] for s in inputs}
    return replace(VertexDecision(parallelism, ordered, explanation), range_bounds=tuple(bounds))


class RangeSorts:
    """What the adaptive scheduler keeps for its range exchanges: each range result's samples,
    by producer (from the first finished attempt of each, as its bytes are counted), until its
    sort is decided (the decision holds all they were for: a snapshot need not), and each
    decided sort's bounds, which its tasks' deployments carry."""

    __slots__ = ("inputs", "samples", "bounds", "_decided")

    def __init__(self, graph) -> None:
        self.inputs: dict[str, str] = {  # sorting vertex -> the range result it reads
            ejv.name: result.id
            for ejv in graph.job_vertices.values()
            for result in ejv.inputs
            if result.edge.partitioner is not None and result.edge.partitioner.is_range
        }
        self.samples: dict[str, dict[int, Sample]] = {}
        self.bounds: dict[str, tuple[bytes, ...]] = {}
        self._decided: set[str] = set()  # range results whose sort is decided

    def record(self, partition: int, report) -> None:
        """Keep a producer's sample; its chunks' bytes from its report (evenly shared when
        it sent only its total)."""
        keys = report.range_bounds
        if (
            not keys
            or report.result in self._decided
            or partition in self.samples.get(report.result, {})
        ):
            return
        chunks = len(keys) - 1
        if report.has_breakdown:
            sizes = tuple(int(b) for b in report.counts()[:chunks])
        else:
            sizes = tuple(
                report.total // chunks + (j < report.total % chunks) for j in range(chunks)
            )
        self.samples.setdefault(report.result, {})[partition] = (tuple(keys), sizes)

    def decide(
        self,
        vertex: str,
        inputs: list[InputStats],
        user_parallelism: int | None,
        vertex_max_parallelism: int,
        settings: DeciderSettings,
    ) -> VertexDecision:
        result = self.inputs[vertex]
        return decide_range_vertex(
            inputs,
            result,
            self.samples.get(result, {}),
            user_parallelism,
            vertex_max_parallelism,
            settings,
        )

    def on_decided(self, event) -> None:
        if event.vertex in self.inputs:
            self.bounds[event.vertex] = tuple(event.range_bounds)
            self._decided.add(self.inputs[event.vertex])
            self.samples.pop(self.inputs[event.vertex], None)

    def key_range(self, vertex: str, subtask: int) -> tuple[bytes | None, bytes | None] | None:
        """Task ``subtask``'s keys, for its deployment; None for a vertex sorting nothing."""
        bounds = self.bounds.get(vertex)
        return None if bounds is None else key_range(bounds, subtask)

    def export(self) -> tuple:
        return (
            tuple((r, tuple(by.items())) for r, by in self.samples.items()),
            tuple(self.bounds.items()),
        )

    def restore(self, image: tuple) -> None:
        samples, bounds = image
        self.samples = {r: {p: (tuple(k), tuple(s)) for p, (k, s) in by} for r, by in samples}
        self.bounds = {v: tuple(b) for v, b in bounds}
        self._decided = {self.inputs[v] for v in self.bounds if v in self.inputs}

    def describe(self) -> tuple:
        return (
            tuple(sorted((r, tuple(sorted(by.items()))) for r, by in self.samples.items())),
            tuple(sorted(self.bounds.items())),
        )
