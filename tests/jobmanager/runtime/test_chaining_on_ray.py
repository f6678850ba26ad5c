"""Operator chaining on a real local Ray cluster with real PySpark: two PySpark vertices and a
sink joined by FORWARD edges run as one task per subtask and one Spark job, with the result of
the same job unchained; a small source hashed into a one-task aggregate (TPC-H Q1's shape)
runs as one task and one Spark query, also when the source joins a small side broadcast to it
(Q3's shape); a failure in the chain's second function restarts the whole chain."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import pyarrow.parquet as pq

from jobmanager import Client, FileSource, JobGraph, ParquetSink, Partitioner, arrow, spark
from jobmanager.model.config import OPERATOR_CHAINING
from examples.compare import read_result
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]


def numbers() -> pa.Table:
    values = pa.array(range(2000), pa.int64())
    return pa.table({"key": pa.compute.remainder(values, 13), "value": values})


def totals(frame):
    from pyspark.sql import functions as F

    return frame.groupBy("key").agg(F.sum("value").alias("total"))


def big_only(marker: str | None):
    def keep(frame):
        if marker is not None and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("injected: the chain's second function fails once")
        return frame.where("total > 150000")

    return keep


def job(out: str, marker: str | None = None) -> JobGraph:
    g = JobGraph("chained")
    src = g.add_vertex("numbers", parallelism=2, operator=arrow(numbers))
    agg = g.add_vertex("totals", parallelism=2, operator=spark(totals))
    keep = g.add_vertex("big", operator=spark(big_only(marker)))
    sink = g.add_vertex("sink", operator=ParquetSink(out))
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, keep, Partitioner.FORWARD)
    g.connect(keep, sink, Partitioner.FORWARD)
    return g


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def test_a_chained_pyspark_pair_is_one_task_and_one_spark_job_with_the_unchained_result(
    client, tmp_path
):
    chained = client.submit(job(str(tmp_path / "chained")), config=FAST).wait(timeout=180)
    unchained = client.submit(
        job(str(tmp_path / "unchained")),
        config={**FAST, OPERATOR_CHAINING.key: False},
    ).wait(timeout=180)
    assert chained.status == unchained.status == "FINISHED", (chained.cause, unchained.cause)
    assert (
        read_result(tmp_path / "chained")
        .sort_by("key")
        .equals(read_result(tmp_path / "unchained").sort_by("key"))
    )
    task = chained.vertices["totals"]
    assert task.chain == "totals -> big -> sink" and chained.vertices["sink"] is task
    assert (task.tasks, task.deployments) == (2, 2)
    # one Spark query per task, totals and the filter composed: what the two queries of the
    # unchained vertices ran, less one query's jobs (its schema reading and its run)
    separate = unchained.vertices["totals"].spark_jobs + unchained.vertices["big"].spark_jobs
    assert 0 < task.spark_jobs < separate, (task.spark_jobs, separate)
    assert unchained.vertices["totals"].chain == ""


def partial_totals(frame):
    from pyspark.sql import functions as F

    return frame.groupBy("key").agg(F.sum("value").alias("total"), F.count("*").alias("rows"))


def final_totals(frame):
    from pyspark.sql import functions as F

    return (
        frame.groupBy("key")
        .agg(F.sum("total").alias("total"), F.sum("rows").alias("rows"))
        .orderBy("key")
    )


def q1_shaped(data: str, out: str, pre_aggregated: bool = False) -> JobGraph:
    """The final aggregate set to one task, or, ``pre_aggregated``, as the planner makes it:
    its parallelism unset and its input marked pre-aggregated."""
    g = JobGraph("q1-shaped")
    lines = g.add_vertex("lines", operator=spark(partial_totals), sources=[FileSource(data)])
    final = g.add_vertex(
        "final", parallelism=None if pre_aggregated else 1, operator=spark(final_totals)
    )
    sink = g.add_vertex("sink", operator=ParquetSink(out))
    g.connect(lines, final, Partitioner.hash("key"), pre_aggregated=pre_aggregated)
    g.connect(final, sink, Partitioner.FORWARD)
    return g


def grouped(data: str, out: str) -> JobGraph:
    return q1_shaped(data, out, pre_aggregated=True)


def chained_and_not(client, tmp_path, build):
    """The job over three files of ``numbers``, run chained and with chaining off; both
    results must be the same: the job results and the chained one's rows."""
    (tmp_path / "data").mkdir()
    for part in range(3):
        pq.write_table(numbers(), tmp_path / "data" / f"part-{part}.parquet")
    data = str(tmp_path / "data")
    chained = client.submit(build(data, str(tmp_path / "out" / "chained")), config=FAST).wait(
        timeout=180
    )
    unchained = client.submit(
        build(data, str(tmp_path / "out" / "unchained")),
        config={**FAST, OPERATOR_CHAINING.key: False},
    ).wait(timeout=180)
    assert chained.status == unchained.status == "FINISHED", (chained.cause, unchained.cause)
    result = read_result(tmp_path / "out" / "chained")
    assert result.equals(read_result(tmp_path / "out" / "unchained"))
    return chained, unchained, result


def one_chained_query(chained, unchained, result):
    """The chained run's one task of ``lines -> final -> sink``, after checking its rows and
    that it ran no more Spark jobs than the unchained run's two vertices (as many, now that the
    unchained aggregate reads its input as one partition and shuffles none of it)."""
    assert result.column("rows").to_pylist() == [
        3 * (2000 // 13 + (k < 2000 % 13)) for k in range(13)
    ]
    task = chained.vertices["lines"]
    assert task.chain == "lines -> final -> sink" and chained.vertices["final"] is task
    assert (task.tasks, task.deployments, task.parallelism) == (1, 1, 1)
    separate = unchained.vertices["lines"].spark_jobs + unchained.vertices["final"].spark_jobs
    assert 0 < task.spark_jobs <= separate, (task.spark_jobs, separate)
    assert (unchained.vertices["lines"].tasks, unchained.vertices["final"].tasks) == (1, 1)
    return task


def test_a_small_source_hashed_into_one_task_runs_with_it_as_one_spark_query(client, tmp_path):
    """The source's three files hold far less than a task's volume: it infers one task when
    the job is taken, so its hash edge into the one-task aggregate chains, and the partial and
    final aggregates are one Spark query; unchained, they are two tasks and two queries."""
    chained, unchained, result = chained_and_not(client, tmp_path, q1_shaped)
    task = one_chained_query(chained, unchained, result)
    assert unchained.vertices["lines"].tasks == 1 and unchained.vertices["lines"].chain == ""
    assert task.explanation.startswith(
        "set by the user on final: 1; its sources, asked when the "
        "job was taken, inferred one task, so it runs chained: "
    )
    assert "3 files" in task.explanation, task.explanation


def test_a_final_aggregate_of_pre_aggregated_rows_runs_in_their_one_task(client, tmp_path):
    """The source infers one task when the job is taken, and the aggregate reading its
    pre-aggregated rows runs in that task: one Spark query where, unchained, the aggregate's
    parallelism is decided from the bytes and it runs as a task and a query of its own."""
    chained, unchained, result = chained_and_not(client, tmp_path, grouped)
    one_chained_query(chained, unchained, result)
    assert " of input / " in unchained.vertices["final"].explanation  # decided from bytes


def wanted_keys() -> pa.Table:
    return pa.table({"wanted": pa.array([1, 5, 12], pa.int64())})


def wanted_totals(frame, wanted):
    from pyspark.sql import functions as F

    kept = frame.join(F.broadcast(wanted), frame.key == wanted.wanted, "left_semi")
    return partial_totals(kept)


def q3_shaped(data: str, out: str) -> JobGraph:
    g = q1_shaped(data, out)
    g.vertex("lines").operator = spark(wanted_totals)
    keys = g.add_vertex("keys", parallelism=1, operator=arrow(wanted_keys))
    g.connect(keys, g.vertex("lines"), Partitioner.BROADCAST)
    return g


def test_a_small_scan_fed_by_a_broadcast_chains_into_one_task_with_the_unchained_result(
    client, tmp_path
):
    """TPC-H Q3's shape: the scan joins a small side sent to it whole, then one task takes the
    result. The broadcast counts no bytes, so the scan's sources decide its one task when the
    job is taken; the chain starts once the broadcast is written and reads it."""
    chained, unchained, result = chained_and_not(client, tmp_path, q3_shaped)
    assert result.column("key").to_pylist() == [1, 5, 12]
    assert result.column("rows").to_pylist() == [
        3 * (2000 // 13 + (k < 2000 % 13)) for k in (1, 5, 12)
    ]
    task = chained.vertices["lines"]
    assert task.chain == "lines -> final -> sink" and (task.tasks, task.parallelism) == (1, 1)
    assert "its inputs broadcast only" in task.explanation, task.explanation
    assert chained.vertices["keys"].chain == "" and unchained.vertices["lines"].chain == ""


def test_a_failure_inside_a_chain_restarts_the_chain(client, tmp_path):
    marker = str(tmp_path / "failed-once")
    result = client.submit(job(str(tmp_path / "out"), marker), config=FAST).wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert result.vertices["big"].deployments == result.vertices["big"].tasks + 1
    assert os.path.exists(marker)
    assert read_result(tmp_path / "out").num_rows > 0
