"""Source parallelism inference (FLIP-379): the protocols a source may implement, and how the
answers of several sources combine.

Priority, as in Flink: a parallelism the user set > a static inference made when the job graph
was built > a dynamic inference made at run time, with the data volume per task and any dynamic
filtering an upstream vertex produced. Dynamic inference may be slow (it lists files), so the
scheduling core asks for it as a command and gets the answer back as an event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, runtime_checkable

from jobmanager.messages.codec import register
from jobmanager.model.urls import redact

__all__ = [
    "DynamicFilteringInfo",
    "DynamicParallelismInference",
    "InferenceContext",
    "PlanningSource",
    "SourcePlan",
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
    """What a source may use to choose its parallelism: Flink's upper bound, data volume per
    task and dynamic filtering, and ``slots``, the most slots the job can hold at once (None
    where the cluster may grow without bound), from the job's submission, so a replay sees it."""

    parallelism_upper_bound: int
    data_volume_per_task: int
    dynamic_filtering: tuple[DynamicFilteringInfo, ...] = ()
    slots: int | None = None

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


@dataclass(frozen=True, slots=True)
class SourcePlan:
    """What a source's dynamic inference found: its parallelism and, for a source that lists
    files, the splits (tasks read them rather than listing again) and what the listing saw."""

    parallelism: int
    splits: tuple = ()
    description: str = ""


@runtime_checkable
class PlanningSource(Protocol):
    def plan(self, context: InferenceContext) -> SourcePlan:
        """Dynamic inference that also keeps what it listed (see ``SourcePlan``)."""
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


def _plan(source, context: InferenceContext) -> SourcePlan | None:
    """A source's plan (None: it infers nothing at run time)."""
    if isinstance(source, PlanningSource):
        return source.plan(context)
    if isinstance(source, DynamicParallelismInference):
        return SourcePlan(source.infer_parallelism(context))
    return None


def _splits_key(plan: SourcePlan | None, keep_splits: Callable[[tuple], str]) -> str:
    """The key a source's listed splits are kept under ("": it listed none)."""
    return keep_splits(plan.splits) if plan and plan.splits else ""


def _listed_bytes(plan: SourcePlan) -> int:
    return sum(getattr(split, "length", 0) for split in plan.splits)


def _inferred_text(source, plan: SourcePlan) -> str:
    """What a source inferred, for the explanation (secrets redacted)."""
    described = f" ({plan.description})" if plan.description else ""
    return redact(f"{source!r} -> {plan.parallelism}") + described


def infer_vertex_parallelism(
    vertex: str,
    sources,
    context: InferenceContext,
    keep_splits: Callable[[tuple], str] = lambda splits: "",
):
    """Run the dynamic inference of a vertex's sources, as the shell does for an
    InferSourceParallelism command; ``keep_splits`` stores a source's listed splits and
    answers their key. Any error becomes the event that fails the job."""
    from jobmanager.messages import events as ev

    try:
        plans = [_plan(s, context) for s in sources]
        keys = tuple(_splits_key(plan, keep_splits) for plan in plans)
    except Exception as error:  # user code: report it, never let it escape the shell
        return ev.SourceInferenceFailed(vertex, f"{type(error).__name__}: {error}")
    answered = [(s, plan) for s, plan in zip(sources, plans) if plan is not None]
    parallelism = combine_inferred(
        [plan.parallelism for _, plan in answered], context.parallelism_upper_bound
    )
    detail = "; ".join(_inferred_text(s, plan) for s, plan in answered)
    read = sum(_listed_bytes(plan) for _, plan in answered)
    return ev.SourceParallelismInferred(
        vertex, parallelism, detail, keys if any(keys) else (), read
    )
