"""What the JobManager checks when it takes a job, which scheduler the job gets, and what it
decides then: the chains, and the source inferences they rest on.

The client runs the same checks before it submits, so a bad job fails in the caller's process
with the error naming the culprit, not in a JobManager started for nothing. The decisions are
pure: the shell asks the sources (``sources_to_ask``), then ``decide_admission`` turns their
answers into what ``JobSubmitted`` records.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from jobmanager.core.scheduler.adaptive.settings import source_inference_context
from jobmanager.errors import JobGraphError
from jobmanager.messages import events as ev
from jobmanager.model.chaining import chain_name, decide_chains, one_task_candidates
from jobmanager.model.config import (
    MAX_PARALLELISM,
    MAX_SLOTS,
    MIN_PARALLELISM,
    OPERATOR_CHAINING,
    SCHEDULER,
    Configuration,
)
from jobmanager.model.inference import InferenceContext
from jobmanager.model.jobgraph import JobGraph

__all__ = [
    "check_all_blocking",
    "check_range_edges",
    "decide_admission",
    "slot_limit",
    "sources_to_ask",
    "uses_adaptive_scheduler",
    "validate_job",
]


def uses_adaptive_scheduler(job_graph: JobGraph, config: Configuration) -> bool:
    chosen = config[SCHEDULER.key]
    return job_graph.is_dynamic if chosen is None else chosen == "AdaptiveBatch"


def validate_job(job_graph: JobGraph, config: Configuration) -> None:
    """Every check the JobManager would make when it takes the job, without taking it."""
    config.check_consistent()
    job_graph.validate()
    adaptive = uses_adaptive_scheduler(job_graph, config)
    if adaptive:
        check_all_blocking(job_graph)
    check_range_edges(job_graph, adaptive)


def check_all_blocking(job_graph: JobGraph) -> None:
    """The adaptive scheduler decides a consumer's parallelism from what its finished producers
    wrote; a pipelined consumer runs while its producer does, so there is nothing to read yet."""
    for edge in job_graph.edges:
        if edge.result_type.must_be_pipelined:
            raise JobGraphError(
                f"edge {edge.id!r} is pipelined, but the adaptive batch scheduler (chosen because "
                "some vertex leaves its parallelism unset) needs blocking edges: make it "
                "blocking, or set every parallelism and use jobmanager.core.scheduler: Default"
            )


def check_range_edges(job_graph: JobGraph, adaptive: bool) -> None:
    """A range edge's consumer sorts by key ranges the adaptive scheduler decides from its
    producers' samples; under the default scheduler nothing decides them, so its consumer
    must be one task."""
    if adaptive:
        return
    for edge in job_graph.edges:
        if (
            edge.partitioner is not None
            and edge.partitioner.is_range
            and edge.target.parallelism != 1
        ):
            raise JobGraphError(
                f"edge {edge.id!r} is range partitioned, which needs the adaptive batch "
                f"scheduler to decide its key ranges: leave {edge.target.name!r}'s parallelism "
                "unset, or set it to 1"
            )


def slot_limit(config: Configuration, cluster_cpus: int | None) -> int | None:
    """The most slots the job may hold: ``slotmanager.number-of-slots.max``, else the cluster's
    CPUs when the job was submitted (None: no limit)."""
    configured = config[MAX_SLOTS.key]
    return configured if configured is not None else cluster_cpus


def sources_to_ask(
    job_graph: JobGraph, config: Configuration, cluster_cpus: int | None
) -> dict[str, InferenceContext]:
    """The source vertices whose inferred parallelism decides whether they chain
    (``one_task_candidates``), with what the scheduler would tell their sources."""
    if not uses_adaptive_scheduler(job_graph, config):
        return {}
    default_max = config[MAX_PARALLELISM.key]
    slots = slot_limit(config, cluster_cpus)
    return {
        name: source_inference_context(
            config, job_graph.vertex(name).max_parallelism or default_max, slots
        )
        for name in one_task_candidates(
            job_graph, config[OPERATOR_CHAINING.key], config[MIN_PARALLELISM.key]
        )
    }


def decide_admission(
    job_graph: JobGraph,
    config: Configuration,
    answers: Sequence[ev.SourceParallelismInferred | ev.SourceInferenceFailed],
) -> tuple[tuple[tuple[str, ...], ...], tuple[ev.SourceParallelismInferred, ...]]:
    """The job's chains, given what ``sources_to_ask``'s sources answered, and those answers
    named as the chained graph names their vertices (a source heading a chain gives the chain
    its sources). A failed inference decides nothing: the scheduler asks again when the vertex
    is due, and the job fails then, with the source's error."""
    inferred = [a for a in answers if isinstance(a, ev.SourceParallelismInferred)]
    chains = decide_chains(
        job_graph,
        config[OPERATOR_CHAINING.key],
        frozenset(a.vertex for a in inferred if a.parallelism == 1),
        config[MIN_PARALLELISM.key],
    )
    heads = {chain[0]: chain_name(chain) for chain in chains}
    return chains, tuple(
        dataclasses.replace(a, vertex=heads.get(a.vertex, a.vertex)) for a in inferred
    )
