"""Run as a script by ``test_class_archive.py``, in a process of its own (PySpark keeps one
JVM per process): start a TaskManager's SparkSession (its default JVM options, or the class
archive named by ``--archive``), run one query, and print as JSON its rows and whether the JVM
has the archive mapped into its memory."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
from pyspark.sql import functions as F

from jobmanager.model.config import Configuration
from jobmanager.model.operators import SparkFunction
from taskmanager import class_archive
from taskmanager.cancellation import CancelToken
from taskmanager.java import find_java
from taskmanager.spark import SparkSessionProvider, SparkTask, run_spark_function


def totals(frame):
    return frame.groupBy("key").agg(F.sum("value").alias("total")).orderBy("key")


def main(argv: list[str]) -> None:
    java, _ = find_java()
    archive = Path(argv[argv.index("--archive") + 1]) if "--archive" in argv else None
    options = None if archive is None else [f"-XX:SharedArchiveFile={archive}"]
    work = Path(tempfile.mkdtemp(prefix="tidal-archive-probe-"))
    spark = SparkSessionProvider(2, work, Configuration(), java_options=options)
    table = pa.table({"key": [i % 3 for i in range(30)], "value": list(range(30))})
    task = SparkTask(spark, work / "t", "probe", CancelToken())
    result = run_spark_function(SparkFunction(totals), [table], task, vertex="totals")
    from pyspark import SparkContext

    pid = SparkContext._gateway.proc.pid
    archive = archive or class_archive.archive_path(java)
    mapped = str(archive) in Path(f"/proc/{pid}/maps").read_text()
    spark.stop_jvm()
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"rows": result.to_pylist(), "archive": str(archive), "mapped": mapped}))


if __name__ == "__main__":
    main(sys.argv[1:])
