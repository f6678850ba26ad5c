"""A JobManager killed by pid after it decided a join at run time and before the join's tasks
got anywhere: the new JobManager replays the decision from the log instead of deciding again,
the same plan runs, the answer is right, and no finished task runs again."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager import (
    Client,
    FileSource,
    JobGraph,
    ParquetSink,
    Partitioner,
    arrow,
    spark,
)
from jobmanager.messages import events as ev
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS
from jobmanager.model.joins import JoinInput
from tests.jobmanager.runtime.failover_jobs import PARTS, wait_open, write_data
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {**FAST, NUMBER_OF_TASK_SLOTS.key: 2}
NAMES = {k: f"key {k}" for k in range(7)}


def join_job(data: str, names: str, out: str, gate: str) -> JobGraph:
    """``read`` (4 files) and ``names`` (7 rows) hashed on the key into a join marked for a
    run-time decision; the join's tasks wait at the gate; the sum per name goes to Parquet."""

    def joined(lines, keys):
        from pyspark.sql import functions as F

        wait_open(gate)
        return (
            lines.join(keys, lines.key == keys.k)
            .groupBy("name")
            .agg(F.sum("value").alias("value_sum"))
        )

    g = JobGraph("join-failover")
    read = g.add_vertex(
        "read",
        PARTS,
        sources=[FileSource(data)],
        operator=arrow(lambda t: t.select(["key", "value"])),
    )
    keys = g.add_vertex("names", 1, sources=[FileSource(names)])
    join = g.add_vertex("join", operator=spark(joined))
    sink = g.add_vertex("sink", operator=ParquetSink(out, overwrite=True))
    g.connect(read, join, Partitioner.hash("key"), join=JoinInput("j1", "inner", "left"))
    g.connect(keys, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right"))
    g.connect(join, sink, Partitioner.FORWARD)
    return g


def eventually(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
    return value


def submit_held_at_the_gate(make_job, tmp_path, config):
    """``make_job(data, names, out, gate)`` over ``write_data``'s files and the ``NAMES``
    table, submitted; returns once one of its join tasks waits at the gate: the handle, the
    expected sums per key, the output directory and the gate."""
    data, names, out, gate = (tmp_path / n for n in ("data", "names", "out", "gate"))
    gate.mkdir()
    sums = write_data(str(data))
    names.mkdir()
    pq.write_table(
        pa.table({"k": pa.array(list(NAMES), pa.int64()), "name": list(NAMES.values())}),
        names / "part-0.parquet",
    )
    handle = Client().submit(make_job(str(data), str(names), str(out), str(gate)), config=config)
    eventually(
        lambda: any(p.name.startswith("started-") for p in gate.iterdir()),
        "a join task deployed and waiting at the gate",
    )
    return handle, sums, out, gate


def sums_written(out) -> dict:
    table = pq.read_table(out)
    return dict(zip(table["name"].to_pylist(), table["value_sum"].to_pylist()))


def join_decisions(handle) -> list[ev.VertexParallelismDecided]:
    return [
        event
        for event in handle.events()
        if type(event) is ev.VertexParallelismDecided and event.joins
    ]


def test_killed_after_a_join_was_decided_the_decision_is_replayed_not_taken_again(
    ray_cluster, tmp_path
):
    handle, sums, out, gate = submit_held_at_the_gate(join_job, tmp_path, CONFIG)
    (decided,) = join_decisions(handle)
    assert decided.joins[0].is_broadcast and decided.joins[0].side == "right"
    pid = handle.status().pid
    os.kill(pid, 9)
    (gate / "open").touch()

    result = handle.wait(timeout=240)
    assert result.status == "FINISHED", result.cause
    assert handle.status().recoveries == 1 and handle.status().pid != pid
    assert join_decisions(handle) == [decided]  # replayed, never decided again
    assert result.vertices["join"].parallelism == decided.parallelism
    for report in result.vertices.values():
        assert report.deployments == report.tasks, report  # no finished task ran again
    assert sums_written(out) == {NAMES[k]: total for k, total in sums.items()}
    handle.release()
