"""What the JobManager checks when it takes a job, and which scheduler the job gets.

The client runs the same checks before it submits, so a bad job fails in the caller's process
with the error naming the culprit, not in a JobManager started for nothing.
"""

from __future__ import annotations

from jobmanager.errors import JobGraphError
from jobmanager.model.config import Configuration
from jobmanager.model.jobgraph import JobGraph

__all__ = ["check_all_blocking", "uses_adaptive_scheduler", "validate_job"]


def uses_adaptive_scheduler(job_graph: JobGraph, config: Configuration) -> bool:
    chosen = config["jobmanager.core.scheduler"]
    return job_graph.is_dynamic if chosen is None else chosen == "AdaptiveBatch"


def validate_job(job_graph: JobGraph, config: Configuration) -> None:
    """Every check the JobManager would make when it takes the job, without taking it."""
    config.check_consistent()
    job_graph.validate()
    if uses_adaptive_scheduler(job_graph, config):
        check_all_blocking(job_graph)


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
