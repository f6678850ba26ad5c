"""Rebuilding a job's state from its log: never deciding again, only applying what was logged.

A log starts with ``JobSubmitted`` (the graph, the effective configuration, the values read from
the cluster); a fresh state built from it that applies every later event (``apply``, which
decides nothing: the decisions the live run made are events of the log), with the commands it
answers dropped (the JobManager that logged the events carried them out), is the state that
JobManager had. With a snapshot, the state is restored from it and only the later events are
applied.
"""

from __future__ import annotations

import gc
from typing import Callable, Iterable

from jobmanager.core import snapshot as snapshots
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.chaining import chained_graph
from jobmanager.model.config import Configuration
from jobmanager.model.jobgraph import JobGraph

__all__ = ["new_state", "replay"]

Observer = Callable[[object, list], None]


def new_state(
    job_graph: JobGraph,
    submitted: ev.JobSubmitted,
    job_id: str,
    snapshot: snapshots.StateSnapshot | None = None,
) -> JobManagerState:
    """The state of a job as it was submitted, or as ``snapshot`` has it."""
    config = Configuration(dict(submitted.config))
    job_graph = chained_graph(job_graph, submitted.chains)  # as decided when it was submitted
    if snapshot is not None:
        return snapshots.restore(
            job_graph, config, snapshot, job_id, submitted.cluster_cpus, submitted.inferred
        )
    return JobManagerState(
        job_graph,
        config,
        job_id=job_id,
        cluster_slots=submitted.cluster_cpus,
        inferred=submitted.inferred,
    )


def replay(
    state: JobManagerState, events: Iterable[object], observe: Observer | None = None
) -> JobManagerState:
    """Apply logged ``events``; ``observe(event, commands)`` sees each one go by. The cyclic
    garbage collector is off meanwhile: a replay only builds state that lives on, and at
    20,000 tasks the collector's passes over it cost a fifth of the replay."""
    log, state.log = state.log, _Quiet()
    collecting = gc.isenabled()
    gc.disable()
    try:
        for event in events:
            commands = state.apply(event)
            if observe is not None:
                observe(event, commands)
    finally:
        state.log = log
        if collecting:
            gc.enable()
    return state


class _Quiet:
    """A logger that says nothing: what a replay applies was logged when it happened."""

    def _nothing(self, *args, **kwargs) -> None:
        pass

    debug = info = warning = error = exception = _nothing
