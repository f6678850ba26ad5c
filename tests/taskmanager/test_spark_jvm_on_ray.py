"""A TaskManager's Spark JVM, as its tasks find it: it collects garbage with the parallel
collector (``taskmanager.spark.BATCH_COLLECTOR``), whatever the JVM's default."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager import Client, JobGraph, ParquetSink, Partitioner, arrow, spark
from tests.jobmanager.runtime.jobs import FAST

pytestmark = pytest.mark.runtime


def one_row() -> pa.Table:
    return pa.table({"x": [1]})


def collectors(frame):
    """The JVM's garbage collectors, by name, one row each."""
    session = frame.sparkSession
    beans = session.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    names = [beans.get(i).getName() for i in range(beans.size())]
    return session.createDataFrame([(name,) for name in names], "name string")


def test_a_task_managers_spark_jvm_collects_with_the_parallel_collector(ray_cluster, tmp_path):
    g = JobGraph("collectors")
    source = g.add_vertex("one", parallelism=1, operator=arrow(one_row))
    names = g.add_vertex("collectors", parallelism=1, operator=spark(collectors))
    sink = g.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out")))
    g.connect(source, names, Partitioner.FORWARD)
    g.connect(names, sink, Partitioner.FORWARD)
    result = Client().submit(g, config=FAST).wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert set(pq.read_table(tmp_path / "out").column("name").to_pylist()) == {
        "PS Scavenge",
        "PS MarkSweep",
    }
