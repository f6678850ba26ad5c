"""A JobManager killed by pid while a join chained into its big side's scan runs: the new
JobManager replays the chain (``JoinChained``) and the chained vertex's decision from the log,
takes over the running tasks, and nothing is decided or run again; the answer is right."""

from __future__ import annotations

import os

import pytest

from jobmanager import (
    FileSource,
    JobGraph,
    ParquetSink,
    Partitioner,
    arrow,
    spark,
)
from jobmanager.messages import events as ev
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, MAX_SLOTS, NUMBER_OF_TASK_SLOTS
from jobmanager.model.joins import JoinInput
from tests.jobmanager.runtime.failover_jobs import PARTS, wait_open
from tests.jobmanager.runtime.jobs import FAST
from tests.jobmanager.runtime.test_join_failover_on_ray import (
    NAMES,
    submit_held_at_the_gate,
    sums_written,
)

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {
    **FAST,
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,  # too few for both scans: the small one goes first
    AVG_DATA_VOLUME_PER_TASK.key: "1 kb",
}


def chained_job(data: str, names: str, out: str, gate: str) -> JobGraph:
    """``read`` (4 files, listed far larger) and ``names`` (7 rows) into a join marked for a
    run-time decision, whose rows nothing needs hashed on the key (``redistributable``); the
    join waits at the gate; the sum per name, hashed on the name, goes to Parquet."""

    def joined(lines, keys):
        wait_open(gate)
        return lines.join(keys, lines.key == keys.k).select("name", "value")

    def summed(rows):
        from pyspark.sql import functions as F

        return rows.groupBy("name").agg(F.sum("value").alias("value_sum"))

    g = JobGraph("chained-join-failover")
    read = g.add_vertex(
        "read", sources=[FileSource(data)], operator=arrow(lambda t: t.select(["key", "value"]))
    )
    keys = g.add_vertex("names", sources=[FileSource(names)])
    join = g.add_vertex("join", operator=spark(joined))
    total = g.add_vertex("sum", operator=spark(summed))
    sink = g.add_vertex("sink", operator=ParquetSink(out, overwrite=True))
    g.connect(read, join, Partitioner.hash("key"), join=JoinInput("j1", "inner", "left", True))
    g.connect(keys, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right", True))
    g.connect(join, total, Partitioner.hash("name"))
    g.connect(total, sink, Partitioner.FORWARD)
    return g


def logged(handle, kind) -> list:
    return [event for event in handle.events() if type(event) is kind]


def test_killed_while_a_chained_join_runs_the_chain_is_replayed_and_its_tasks_taken_over(
    ray_cluster, tmp_path
):
    handle, sums, out, gate = submit_held_at_the_gate(chained_job, tmp_path, CONFIG)
    (chained,) = logged(handle, ev.JoinChained)
    assert (chained.producer, chained.vertex) == ("read", "read -> join")
    (decided,) = [
        e for e in logged(handle, ev.VertexParallelismDecided) if e.vertex == chained.vertex
    ]
    assert decided.parallelism == PARTS
    pid = handle.status().pid
    os.kill(pid, 9)
    (gate / "open").touch()

    result = handle.wait(timeout=240)
    assert result.status == "FINISHED", result.cause
    assert handle.status().recoveries == 1 and handle.status().pid != pid
    assert logged(handle, ev.JoinChained) == [chained]  # replayed, never decided again
    assert [
        e for e in logged(handle, ev.VertexParallelismDecided) if e.vertex == chained.vertex
    ] == [decided]
    assert result.vertices["read"] == result.vertices["join"]  # one report for the chain
    assert result.vertices["join"].chain == "read -> join"
    for report in result.vertices.values():
        assert report.deployments == report.tasks, report  # no task ran again
    assert sums_written(out) == {NAMES[k]: total for k, total in sums.items()}
    handle.release()
