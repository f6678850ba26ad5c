"""A job for the failover tests, and the gates that hold it at a chosen point.

Files under a gate directory say where the job is (``inferring``, ``started-<pid>-<n>``) and
let it go on (``open``), so a test can kill the JobManager at an exact point instead of after
a sleep that a slow machine would outrun.
"""

from __future__ import annotations

import dataclasses
import os
import time
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, arrow, spark

PARTS = 4
ROWS = 2000


def write_data(directory: str) -> dict[int, int]:
    """``PARTS`` Parquet files (one source task each); return the expected sums per key."""
    os.makedirs(directory, exist_ok=True)
    sums: dict[int, int] = {}
    for part in range(PARTS):
        values = pa.array(range(part * ROWS, (part + 1) * ROWS), pa.int64())
        table = pa.table(
            {
                "part": pa.array([part] * ROWS, pa.int64()),
                "key": pc.remainder(values, 7),
                "value": values,
            }
        )
        pq.write_table(table, os.path.join(directory, f"part-{part}.parquet"))
        for value in values.to_pylist():
            sums[value % 7] = sums.get(value % 7, 0) + value
    return sums


def wait_open(gate: str) -> None:
    marker = os.path.join(gate, f"started-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    open(marker, "w").close()
    while not os.path.exists(os.path.join(gate, "open")):
        time.sleep(0.02)


class GatedSource(FileSource):
    """A FileSource whose planning (its listing and parallelism inference) waits at the gate
    (``inferring`` says so), then asks for a task per file: the files are far smaller than a
    task's data volume, which would make them one task."""

    __slots__ = ("gate",)

    def __init__(self, paths: str, gate: str) -> None:
        super().__init__(paths)
        self.gate = gate

    def plan(self, context):
        open(os.path.join(self.gate, "inferring"), "w").close()
        while not os.path.exists(os.path.join(self.gate, "open")):
            time.sleep(0.02)
        return super().plan(dataclasses.replace(context, data_volume_per_task=1))


def failover_job(data: str, out: str, gate: str, *, at: str, pyspark: bool = True) -> JobGraph:
    """Read ``data`` (4 tasks, one per file: set, or inferred by the gated source), sum per key in PySpark (or Arrow, without a JVM), write
    Parquet. ``at`` is where the job waits for the gate: ``inference``, ``source`` (every
    source task but the first's), ``sum`` or ``nowhere``."""

    def read(table: pa.Table) -> pa.Table:
        if at == "source" and table.num_rows and table.column("part")[0].as_py() != 0:
            wait_open(gate)
        return table.select(["key", "value"])

    def sum_by_key(frame):
        from pyspark.sql import functions as F

        if at == "sum":
            wait_open(gate)
        return frame.groupBy("key").agg(F.sum("value").alias("value_sum"))

    def sum_in_arrow(table: pa.Table) -> pa.Table:
        if at == "sum":
            wait_open(gate)
        return table.group_by("key").aggregate([("value", "sum")])

    source = GatedSource(data, gate) if at == "inference" else FileSource(data)
    g = JobGraph("failover")
    src = g.add_vertex(
        "read", None if at == "inference" else PARTS, operator=arrow(read), sources=[source]
    )
    total = g.add_vertex("sum", operator=spark(sum_by_key) if pyspark else arrow(sum_in_arrow))
    sink = g.add_vertex("sink", operator=ParquetSink(out, overwrite=True))
    g.connect(src, total, Partitioner.hash("key"))
    g.connect(total, sink, Partitioner.FORWARD)
    return g


def staging_job(data: str, out: str, gate: str) -> JobGraph:
    """Read and write ``data`` one file per task, forward: the first task's output is staged
    at the sink while the others wait at the gate."""

    def read(table: pa.Table) -> pa.Table:
        if table.num_rows and table.column("part")[0].as_py() != 0:
            wait_open(gate)
        return table

    g = JobGraph("staged")
    src = g.add_vertex("read", parallelism=PARTS, operator=arrow(read), sources=[FileSource(data)])
    sink = g.add_vertex("sink", parallelism=PARTS, operator=ParquetSink(out))
    g.connect(src, sink, Partitioner.FORWARD)
    return g
