"""Recorded event logs of small jobs for the report's tests: the real core run against
simulated TaskManagers, every event stamped as if logged 10 ms after the one before."""

from __future__ import annotations

import numpy as np

from jobmanager.messages import events as ev
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    RESTART_STRATEGY,
    SKEWED_THRESHOLD,
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.operators import ParquetSink, SqlOperator
from tests.jobmanager.core.harness import Run

START_MS = 1_700_000_000_000
STEP_MS = 10


def packed(counts) -> bytes:
    return np.asarray(counts, dtype="<i8").tobytes()


def record(graph: JobGraph, config: dict, **cluster) -> tuple[ev.JobSubmitted, list, Run]:
    """Run ``graph`` to its end; return its ``JobSubmitted``, its log's records (time_ms,
    event) and the run. Its JobManager ended it (``JobEnded``) 10 ms after the last event."""
    run = Run(graph, config, reports_running=True, **cluster)
    terminated = run.go()
    events = [*run.run.events, ev.JobEnded(terminated.status, terminated.cause)]
    records = [(START_MS + STEP_MS * (i + 1), e) for i, e in enumerate(events)]
    submitted = ev.JobSubmitted(
        graph.name,
        "graph-key",
        tuple(Configuration(config).to_dict().items()),
        START_MS / 1000,
        8,
        (),
    )
    return submitted, records, run


def sums_job() -> JobGraph:
    """src (2 tasks, set) --hash--> agg (decided, 4 subpartitions) --forward--> sink."""
    g = JobGraph("sums")
    src = g.add_vertex("src", parallelism=2)
    agg = g.add_vertex("agg", max_parallelism=4)
    sink = g.add_vertex("sink")
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    return g


SRC_SQL = "SELECT id % 4 AS key, id AS value\nFROM range(100)\nWHERE id < 50"
AGG_SQL = "SELECT key, SUM(value) AS total FROM in0 GROUP BY key"


def sql_job() -> JobGraph:
    """``sums_job`` as a planned query: src and agg run SQL pieces, the sink is a result."""
    g = JobGraph("sums-sql")
    src = g.add_vertex(
        "src", parallelism=2, operator=SqlOperator(SRC_SQL, (), "FROM range(100) WHERE id < 50")
    )
    agg = g.add_vertex(
        "agg", max_parallelism=4, operator=SqlOperator(AGG_SQL, ("in0",), "GROUP BY key")
    )
    sink = g.add_vertex("sink", operator=ParquetSink("/results/q"))
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    return g


def sums_bytes(vertex: str, subtask: int, result: str, subpartitions: int) -> bytes:
    """Each src task writes 100, 200, 300, 400 bytes to the four subpartitions; each agg task
    writes 50 bytes for the sink."""
    if vertex == "src":
        return packed([100, 200, 300, 400])
    return packed([50] * subpartitions)


SUMS_CONFIG = {
    AVG_DATA_VOLUME_PER_TASK.key: 1000,
    RESTART_STRATEGY.key: "fixed-delay",
    FIXED_DELAY_ATTEMPTS.key: 2,
    FIXED_DELAY_DELAY.key: 1,
}


def skewed_job() -> JobGraph:
    """probe (4 tasks) --hash, splittable--> join <--hash-- build (2 tasks); subpartition 5 of
    the probe side is hot."""
    g = JobGraph("skewed")
    probe = g.add_vertex("probe", parallelism=4)
    build = g.add_vertex("build", parallelism=2)
    join = g.add_vertex("join", max_parallelism=8)
    g.connect(probe, join, Partitioner.hash("k"), splittable=True)
    g.connect(build, join, Partitioner.hash("k"))
    return g


def skewed_bytes(vertex: str, subtask: int, result: str, subpartitions: int) -> bytes:
    counts = [1000] * subpartitions
    if vertex == "probe":
        counts[5] = 100_000
    return packed(counts)


SKEWED_CONFIG = {
    AVG_DATA_VOLUME_PER_TASK.key: 50_000,
    SKEWED_THRESHOLD.key: 10_000,
}
