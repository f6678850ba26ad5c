"""The job every golden event log records: small, Arrow only (no JVM), and made to leave in its
log what a log can hold: a source parallelism the client fixed, a parallelism the adaptive
scheduler decided, a task that fails once and is restarted, and a JobManager killed and taken
over while a stage waits at a gate.

Its functions are top-level, so the graph blob pickles them by reference: a golden log reads
back under any later Python as long as these names stay. Never rename or remove them.
"""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.compute as pc

from jobmanager import JobGraph, ParquetSink, Partitioner, arrow

SOURCES = 3
ROWS = 300


def numbers(table: pa.Table | None = None) -> pa.Table:
    keys = pa.array(range(ROWS), pa.int64())
    return pa.table({"key": pc.remainder(keys, 7), "value": keys})


class FailOnce:
    """Fails its first call in the whole job (a marker file says it happened), so the log holds
    a task failure and the region's restart."""

    def __init__(self, markers: str) -> None:
        self.markers = markers

    def __call__(self, table: pa.Table) -> pa.Table:
        marker = os.path.join(self.markers, "failed")
        if not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("golden job: the planned failure")
        return table


class Gate:
    """Sums per key once ``<gate>/open`` exists, first leaving ``started-<pid>`` there, so the
    generator kills the JobManager while this stage runs."""

    def __init__(self, gate: str) -> None:
        self.gate = gate

    def __call__(self, table: pa.Table) -> pa.Table:
        open(os.path.join(self.gate, f"started-{os.getpid()}"), "w").close()
        while not os.path.exists(os.path.join(self.gate, "open")):
            time.sleep(0.02)
        return table.group_by("key").aggregate([("value", "sum")])


def golden_job(work: str) -> JobGraph:
    """numbers (3 tasks) -> fail once -> sum (parallelism decided at run time) -> Parquet."""
    g = JobGraph("golden")
    source = g.add_vertex("numbers", parallelism=SOURCES, operator=arrow(numbers))
    flaky = g.add_vertex(
        "flaky", parallelism=SOURCES, operator=arrow(FailOnce(os.path.join(work, "markers")))
    )
    total = g.add_vertex("sum", operator=arrow(Gate(os.path.join(work, "gate"))))
    sink = g.add_vertex("sink", operator=ParquetSink(os.path.join(work, "out")))
    g.connect(source, flaky, Partitioner.REBALANCE)
    g.connect(flaky, total, Partitioner.hash("key"))
    g.connect(total, sink, Partitioner.FORWARD)
    return g
