"""Source parallelism inference (FLIP-379): the protocols a source may implement, and how the
answers of several sources combine.

Priority, as in Flink: a parallelism the user set > a static inference made when the job graph
was built > a dynamic inference made at run time, with the data volume per task and any dynamic
filtering an upstream vertex produced. Dynamic inference may be slow (it lists files), so the
scheduling core asks for it as a command and gets the answer back as an event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, runtime_checkable

from jobmanager.messages.codec import register

__all__ = [
    "DynamicFilteringInfo",
    "DynamicParallelismInference",
    "InferenceContext",
    "StaticParallelismInference",
    "combine_inferred",
    "infer_vertex_parallelism",
    "source_upper_bound",
]


@register
@dataclass(frozen=True, slots=True)
class DynamicFilteringInfo:
    """The values of a partition column that survived an upstream filter (for example the
    dates a dimension-table filter kept); a source reads only those partitions."""

    column: str
    values: tuple[str, ...]


@register
@dataclass(frozen=True, slots=True)
class InferenceContext:
    parallelism_upper_bound: int
    data_volume_per_task: int
    dynamic_filtering: tuple[DynamicFilteringInfo, ...] = ()

    def filter_for(self, column: str) -> DynamicFilteringInfo | None:
        for info in self.dynamic_filtering:
            if info.column == column:
                return info
        return None


@runtime_checkable
class DynamicParallelismInference(Protocol):
    def infer_parallelism(self, context: InferenceContext) -> int:
        """The parallelism this source wants, at most the context's upper bound; -1 means
        "no opinion", which takes the upper bound."""
        ...


@runtime_checkable
class StaticParallelismInference(Protocol):
    def static_parallelism(self) -> int | None:
        """A parallelism known without running anything (from a catalog, say), or None."""
        ...


def combine_inferred(answers: Iterable[int], upper_bound: int) -> int:
    """Several inferring sources in one vertex: the largest answer, -1 read as the upper bound,
    within [1, upper_bound]."""
    values = [upper_bound if a == -1 else a for a in answers]
    if not values:
        return upper_bound
    return max(1, min(upper_bound, max(values)))


def source_upper_bound(
    default_source_parallelism: int | None,
    max_parallelism: int | None,
    default_parallelism: int | None,
    fallback: int,
    vertex_max_parallelism: int,
) -> int:
    """``default-source-parallelism``, falling back to ``max-parallelism``, then to
    ``parallelism.default`` (each only when configured, else ``fallback``, the default
    max-parallelism), never above the vertex's max parallelism."""
    for configured in (default_source_parallelism, max_parallelism, default_parallelism):
        if configured is not None:
            return min(configured, vertex_max_parallelism)
    return min(fallback, vertex_max_parallelism)


def infer_vertex_parallelism(vertex: str, sources, context: InferenceContext):
    """Run the dynamic inference of a vertex's sources, as the shell does for an
    InferSourceParallelism command; any error becomes the event that fails the job."""
    from jobmanager.messages import events as ev

    try:
        answers = [
            s.infer_parallelism(context)
            for s in sources
            if isinstance(s, DynamicParallelismInference)
        ]
    except Exception as error:  # user code: report it, never let it escape the shell
        return ev.SourceInferenceFailed(vertex, f"{type(error).__name__}: {error}")
    parallelism = combine_inferred(answers, context.parallelism_upper_bound)
    detail = ", ".join(f"{type(s).__name__} -> {a}" for s, a in zip(sources, answers))
    return ev.SourceParallelismInferred(vertex, parallelism, detail)
