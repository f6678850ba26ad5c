"""Recording the class archive of ``taskmanager.class_archive``: a JVM started as a
TaskManager's runs a small query of each kind a task runs (an aggregate, a broadcast join with
a date filter and a top-N, a join), through the TaskManager's own code, and writes what it
loaded to the archive as it exits. Run by ``deploy/run`` and the image:

    python -m taskmanager.class_recording --if-missing
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from taskmanager.class_archive import archive_path

__all__ = ["build"]


def build(java: str) -> Path:
    """Make the archive at ``archive_path(java)`` in a JVM of this process, which therefore
    must not have started one: PySpark keeps one JVM per process."""
    from jobmanager.model.config import Configuration
    from jobmanager.model.operators import SparkFunction
    from taskmanager.cancellation import CancelToken
    from taskmanager.spark import SparkSessionProvider, SparkTask, run_spark_function

    target = archive_path(java)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tidal-class-archive-"))
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        # -Xlog:cds=off: not a warning for each of the hundreds of classes it cannot keep
        recording = [f"-XX:ArchiveClassesAtExit={partial}", "-Xlog:cds=off"]
        spark = SparkSessionProvider(2, work, Configuration(), java_options=recording)
        tables = [_orders(), _lines()]
        for index, query in enumerate(_QUERIES):
            task = SparkTask(spark, work / str(index), f"archive-{index}", CancelToken())
            run_spark_function(SparkFunction(query), tables, task, vertex=query.__name__)
        spark.stop_jvm()
        if not partial.is_file():
            raise RuntimeError(f"the JVM left no class archive at {partial}")
        os.replace(partial, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        partial.unlink(missing_ok=True)
    return target


def _orders():
    import datetime

    import pyarrow as pa

    return pa.table(
        {
            "o_orderkey": pa.array(range(1000), pa.int64()),
            "o_orderdate": [
                datetime.date(1995, 1, 1) + datetime.timedelta(days=i % 90) for i in range(1000)
            ],
            "o_priority": [f"{i % 5}-PRIORITY" for i in range(1000)],
        }
    )


def _lines():
    import pyarrow as pa

    return pa.table(
        {
            "l_orderkey": pa.array([i % 1000 for i in range(4000)], pa.int64()),
            "l_price": pa.array([float(i) for i in range(4000)], pa.float64()),
            "l_flag": [("A", "N", "R")[i % 3] for i in range(4000)],
        }
    )


def _aggregate(orders, lines):
    from pyspark.sql import functions as F

    return (
        lines.where(F.col("l_price") > 10)
        .groupBy("l_flag")
        .agg(F.sum("l_price"), F.avg("l_price"), F.count(F.lit(1)))
        .orderBy("l_flag")
    )


def _join(orders, lines):
    from pyspark.sql import functions as F

    joined = lines.join(F.broadcast(orders), lines.l_orderkey == orders.o_orderkey)
    return (
        joined.where(F.col("o_orderdate") < F.lit("1995-03-15").cast("date"))
        .groupBy("o_orderkey", "o_orderdate")
        .agg(F.sum("l_price").alias("revenue"))
        .orderBy(F.desc("revenue"))
        .limit(10)
    )


def _shuffled_join(orders, lines):
    return lines.join(orders, lines.l_orderkey == orders.o_orderkey).groupBy("o_priority").count()


_QUERIES = (_aggregate, _join, _shuffled_join)


def main(argv: list[str]) -> None:
    """``--if-missing``: only when this environment has no archive for its Java yet."""
    from taskmanager.java import find_java

    java, _ = find_java()
    if "--if-missing" in argv and archive_path(java).is_file():
        return
    print(
        "tidal setup: recording the classes a TaskManager's Spark JVM loads (once, ~1 min)",
        file=sys.stderr,
    )
    print(f"tidal setup: the Spark JVM's class archive is {build(java)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
