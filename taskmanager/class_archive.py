"""A class-data-sharing archive of the classes a TaskManager's Spark JVM loads, so the next JVM
maps them from one file instead of loading and verifying each from Spark's jars.

A TaskManager's first PySpark task waits for its JVM: on this 2-core machine a fresh PySpark
session took 8.4-8.6 s to start and its first TPC-H Q1 9.2-10.7 s; with an archive of the
classes such a session loads, 5.0 and 7.2-8.1 s. Java 17 (the oldest PySpark 4 takes) cannot
make the archive by itself as a JVM runs (``-XX:+AutoCreateSharedArchive`` came with 19), so
``python -m taskmanager.class_archive`` makes it once, from a JVM started as a TaskManager's,
which runs a small query of each kind a task runs and records what it loaded at its exit
(``-XX:ArchiveClassesAtExit``). A cold TPC-H Q1 job on a fresh local cluster: 22.8 s without
it, 12.3-13.8 s with it. ``deploy/run`` does that when the environment has none for
its PySpark and its Java. The archive lives in the virtual environment, named by both, and is
renamed into place only when whole: a JVM whose classpath or Java does not match it, or that
finds it damaged, ignores it and loads its classes as usual.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

__all__ = ["archive_path", "build", "java_options"]


def archive_path(java: str) -> Path:
    """Where the archive for this environment's PySpark and ``java`` goes: both are named,
    since an archive is only good for the jars and the JVM it was made from."""
    real = os.path.realpath(java)
    identity = f"{real}:{os.stat(real).st_mtime_ns}".encode()
    name = f"spark-{version('pyspark')}-java-{hashlib.sha256(identity).hexdigest()[:12]}.jsa"
    return Path(sys.prefix) / "share" / "tidal" / name


def java_options(java: str) -> list[str]:
    """The option that maps the archive into a JVM, if there is one for ``java``."""
    path = archive_path(java)
    return [f"-XX:SharedArchiveFile={path}"] if path.is_file() else []


def build(java: str) -> Path:
    """Make the archive at ``archive_path(java)`` in a JVM of this process, which therefore
    must not have started one: PySpark keeps one JVM per process."""
    from jobmanager.model.operators import SparkFunction
    from taskmanager.cancellation import CancelToken
    from taskmanager.spark import SparkSessionProvider, run_spark_function

    target = archive_path(java)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tidal-class-archive-"))
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        # -Xlog:cds=off: not a warning for each of the hundreds of classes it cannot keep
        recording = [f"-XX:ArchiveClassesAtExit={partial}", "-Xlog:cds=off"]
        spark = SparkSessionProvider(2, work, {}, java_options=recording)
        for index, query in enumerate(_QUERIES):
            run_spark_function(
                SparkFunction(query), [_orders(), _lines()], spark=spark,
                task_dir=work / str(index), job_group=f"archive-{index}", vertex=query.__name__,
                cancel=CancelToken(),
            )  # fmt: skip
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

    return pa.table({
        "o_orderkey": pa.array(range(1000), pa.int64()),
        "o_orderdate": [datetime.date(1995, 1, 1) + datetime.timedelta(days=i % 90)
                        for i in range(1000)],
        "o_priority": [f"{i % 5}-PRIORITY" for i in range(1000)],
    })  # fmt: skip


def _lines():
    import pyarrow as pa

    return pa.table({
        "l_orderkey": pa.array([i % 1000 for i in range(4000)], pa.int64()),
        "l_price": pa.array([float(i) for i in range(4000)], pa.float64()),
        "l_flag": [("A", "N", "R")[i % 3] for i in range(4000)],
    })  # fmt: skip


def _aggregate(orders, lines):
    from pyspark.sql import functions as F

    return (lines.where(F.col("l_price") > 10).groupBy("l_flag")
            .agg(F.sum("l_price"), F.avg("l_price"), F.count(F.lit(1))).orderBy("l_flag"))


def _join(orders, lines):
    from pyspark.sql import functions as F

    joined = lines.join(F.broadcast(orders), lines.l_orderkey == orders.o_orderkey)
    return (joined.where(F.col("o_orderdate") < F.lit("1995-03-15").cast("date"))
            .groupBy("o_orderkey", "o_orderdate").agg(F.sum("l_price").alias("revenue"))
            .orderBy(F.desc("revenue")).limit(10))


def _shuffled_join(orders, lines):
    return lines.join(orders, lines.l_orderkey == orders.o_orderkey).groupBy("o_priority").count()


_QUERIES = (_aggregate, _join, _shuffled_join)


def main(argv: list[str]) -> None:
    """``--if-missing``: only when this environment has no archive for its Java yet."""
    from taskmanager.java import find_java

    java, _ = find_java()
    if "--if-missing" in argv and archive_path(java).is_file():
        return
    print("tidal setup: recording the classes a TaskManager's Spark JVM loads (once, ~1 min)",
          file=sys.stderr)  # fmt: skip
    print(f"tidal setup: the Spark JVM's class archive is {build(java)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
