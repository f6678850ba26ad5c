"""A JobManager killed by pid during one action of an unchanged PySpark script run by
``tidal run``: the action's job is taken over by a new JobManager, which replays its log and
finishes it without running a finished task again, and the script goes on to its end with the
output it gives without the kill."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager import Client
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, MAX_SLOTS
from tests.jobmanager.runtime.jobs import FAST
from tests.jobmanager.runtime.test_failover_on_ray import eventually

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

FILES = 40
OPTIONS = {
    **FAST,
    MAX_SLOTS.key: 1,  # one task at a time: the scan's tasks queue
    AVG_DATA_VOLUME_PER_TASK.key: "1 kb",
}
SCRIPT = """\
    import sys

    from pyspark.sql import SparkSession, functions as F

    spark = SparkSession.builder.appName("totals").getOrCreate()
    sales = spark.read.parquet(sys.argv[1])
    totals = sales.groupBy("key").agg(F.sum("value").alias("total"))
    totals.write.mode("overwrite").parquet(sys.argv[2])
    back = spark.read.parquet(sys.argv[2])
    print("keys:", back.count(), "total:", back.agg(F.sum("total")).first()[0])
"""
WRITE_LINE = 8  # the action whose job is killed


def write_sales(directory) -> dict[int, int]:
    """``FILES`` small files (a task each), and the total per key they hold."""
    directory.mkdir()
    totals: dict[int, int] = {}
    for index in range(FILES):
        keys = [(index * 7 + row) % 13 for row in range(60)]
        values = [index * 100 + row for row in range(60)]
        for key, value in zip(keys, values):
            totals[key] = totals.get(key, 0) + value
        pq.write_table(
            pa.table({"key": keys, "value": values}), directory / f"part-{index:02d}.parquet"
        )
    return totals


def running_job(name: str):
    """The running job named ``name``, once its scan has finished a task and has tasks left."""
    client = Client()
    for summary in client.list():
        if summary.name == name and summary.status == JobStatus.RUNNING:
            handle = client.job(summary.job_id)
            scan = [v for v in handle.status().vertices if v.name.startswith("scan")]
            if scan and 0 < scan[0].finished and scan[0].tasks - scan[0].finished >= 10:
                return handle
    return None


def test_a_jobmanager_killed_during_an_action_recovers_and_the_script_ends_as_without(
    ray_cluster, tmp_path
):
    totals = write_sales(tmp_path / "sales")
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(SCRIPT))
    options = [f"-D{key}={value}" for key, value in OPTIONS.items()]
    command = [
        sys.executable,
        "-m",
        "jobmanager",
        "run",
        "--no-dashboard",
        *options,
        str(script),
        str(tmp_path / "sales"),
        str(tmp_path / "totals"),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        handle = eventually(
            lambda: running_job(f"pipeline.py:{WRITE_LINE} write.parquet"),
            "the write's job running, its scan part done",
            timeout=180,
        )
        killed = handle.status().pid
        os.kill(killed, 9)
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err[-3000:]
    assert out.splitlines()[-1] == f"keys: {len(totals)} total: {sum(totals.values())}"
    written = pq.read_table(tmp_path / "totals")
    assert (
        dict(zip(written.column("key").to_pylist(), written.column("total").to_pylist())) == totals
    )
    status = handle.status()
    assert status.status == JobStatus.FINISHED and status.recoveries == 1
    assert status.pid != killed
    for vertex in status.vertices:
        assert vertex.deployments == vertex.tasks, vertex  # no finished task ran again
    assert "3 jobs" in err  # the write, then the count and the sum, each a job
