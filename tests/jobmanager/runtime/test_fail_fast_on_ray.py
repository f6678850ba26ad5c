"""Errors no restart can fix fail the job at the first attempt, on a real cluster with real
PySpark; a failure a retry can fix (a killed TaskManager) keeps the restart strategy
(``test_jobs_on_ray.test_a_killed_taskmanager_reruns_only_what_it_held``)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager import Client, FileSource, JobGraph, NonRecoverableError, ParquetSink, Partitioner
from jobmanager import arrow, spark
from jobmanager.model.config import FIXED_DELAY_ATTEMPTS, NON_RECOVERABLE_EXCEPTIONS
from tests.jobmanager.runtime.jobs import FAST

pytestmark = pytest.mark.runtime

RETRIES = {**FAST, FIXED_DELAY_ATTEMPTS.key: 3}


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


@pytest.fixture
def numbers(tmp_path):
    path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"key": [1, 2, 3], "value": [10, 20, 30]}), path)
    return str(path)


def run(client, out, operator, numbers, config=RETRIES):
    g = JobGraph("fail-fast")
    step = g.add_vertex("step", sources=[FileSource(numbers)], operator=operator)
    sink = g.add_vertex("sink", operator=ParquetSink(out))
    g.connect(step, sink, Partitioner.FORWARD)
    handle = client.submit(g, config=config)
    result = handle.wait(timeout=180)
    handle.release()
    return result


@pytest.mark.spark
def test_a_spark_analysis_error_fails_the_job_after_one_attempt(client, tmp_path, numbers):
    result = run(
        client, str(tmp_path / "out"), spark(lambda df: df.select("no_such_column")), numbers
    )
    assert result.status == "FAILED"
    assert "AnalysisException" in result.cause and "no_such_column" in result.cause
    assert "not retried" in result.cause
    assert result.vertices["step"].deployments == 1


def test_a_wrong_return_type_fails_the_job_after_one_attempt(client, tmp_path, numbers):
    result = run(client, str(tmp_path / "out"), arrow(lambda table: table.num_rows), numbers)
    assert result.status == "FAILED"
    assert "returned int, not a pyarrow.Table" in result.cause
    assert result.vertices["step"].deployments == 1


class BadRecord(Exception):
    pass


def raise_bad_record(table):
    raise BadRecord("row 2 has no key")


def raise_non_recoverable(table):
    raise NonRecoverableError("the input is not what this job expects")


def test_users_mark_their_own_errors_non_recoverable(client, tmp_path, numbers):
    config = {**RETRIES, NON_RECOVERABLE_EXCEPTIONS.key: f"{__name__}.BadRecord"}
    result = run(client, str(tmp_path / "a"), arrow(raise_bad_record), numbers, config)
    assert result.status == "FAILED" and result.vertices["step"].deployments == 1
    result = run(client, str(tmp_path / "b"), arrow(raise_non_recoverable), numbers)
    assert result.status == "FAILED" and result.vertices["step"].deployments == 1
    result = run(client, str(tmp_path / "c"), arrow(raise_bad_record), numbers)
    assert result.status == "FAILED" and result.vertices["step"].deployments == 4  # retried
