"""Small Arrow jobs for the runtime tests: no JVM, so they start fast."""

from __future__ import annotations

import time

import pyarrow as pa
import pyarrow.compute as pc

from jobmanager import JobGraph, ParquetSink, Partitioner, arrow
from jobmanager.model.config import (
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    HEARTBEAT_INTERVAL,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
)

FAST = {
    HEARTBEAT_INTERVAL.key: "200 ms",
    RESTART_STRATEGY.key: "fixed-delay",
    FIXED_DELAY_ATTEMPTS.key: 5,
    FIXED_DELAY_DELAY.key: "100 ms",
    NUMBER_OF_TASK_SLOTS.key: 1,
}


def numbers(count: int, pause: float = 0.0):
    def produce() -> pa.Table:
        time.sleep(pause)
        keys = pa.array(range(count), pa.int64())
        return pa.table({"key": pc.remainder(keys, 10), "value": keys})

    return produce


def sum_by_key(pause: float = 0.0):
    def aggregate(table: pa.Table) -> pa.Table:
        time.sleep(pause)
        return table.group_by("key").aggregate([("value", "sum")])

    return aggregate


def sum_job(
    out: str, sources: int = 4, rows: int = 1000, pause: float = 0.0, consumers: int | None = None
) -> JobGraph:
    g = JobGraph("sums")
    src = g.add_vertex("numbers", parallelism=sources, operator=arrow(numbers(rows, pause)))
    agg = g.add_vertex("sum", parallelism=consumers, operator=arrow(sum_by_key(pause)))
    sink = g.add_vertex("sink", operator=ParquetSink(out))
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    return g


def expected_sums(sources: int, rows: int) -> dict[int, int]:
    sums: dict[int, int] = {}
    for value in range(rows):
        sums[value % 10] = sums.get(value % 10, 0) + value * sources
    return sums
