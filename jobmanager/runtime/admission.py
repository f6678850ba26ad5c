"""Taking a job, the shell's part: ask the sources whose answers decide the job's chains.

The core says which source vertices to ask and what to tell them (``core.admission``); this
runs their inferences (listing files: I/O, so here and not in the core), keeps the splits each
listing found in the job's blob store as the scheduler's own inferences do, and hands the
answers back to the core for the decision that ``JobSubmitted`` records.
"""

from __future__ import annotations

import time

import structlog

from blob import BlobStore
from jobmanager.core.admission import decide_admission, sources_to_ask
from jobmanager.messages import events as ev
from jobmanager.messages.codec import encode
from jobmanager.model.config import Configuration
from jobmanager.model.inference import infer_vertex_parallelism
from jobmanager.model.jobgraph import JobGraph

__all__ = ["admit", "split_keeper"]

_log = structlog.get_logger("tidal.jobmanager")


def split_keeper(blobs: BlobStore):
    """Where a source's listed splits go: a blob of the job's, whose key the tasks get."""
    return lambda splits: blobs.put(encode(splits)).digest


def admit(
    job_graph: JobGraph, config: Configuration, cluster_cpus: int, blobs: BlobStore, job_id: str
) -> tuple[tuple[tuple[str, ...], ...], tuple[ev.SourceParallelismInferred, ...]]:
    """The job's chains, and the source inferences they rest on (``JobSubmitted.inferred``)."""
    answers = []
    for name, context in sources_to_ask(job_graph, config, cluster_cpus).items():
        began = time.perf_counter()
        answer = infer_vertex_parallelism(
            name, job_graph.vertex(name).sources, context, split_keeper(blobs)
        )
        _log.info(
            "source parallelism inferred when the job was taken",
            job=job_id,
            vertex=name,
            parallelism=getattr(answer, "parallelism", None),
            ms=int((time.perf_counter() - began) * 1000),
        )
        answers.append(answer)
    return decide_admission(job_graph, config, answers)
