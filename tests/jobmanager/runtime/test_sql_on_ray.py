"""Hand-built SQL jobs (``sql_jobs``) on a real local Ray cluster with real PySpark: a scan
hashed into an aggregate whose result comes back to the client, a broadcast join written to a
ParquetSink, a chain of pieces run as one task, SQL that Spark refuses failing the job at its
first attempt, and the collected result's bounds and removal with the job."""

from __future__ import annotations

import dataclasses
import os
import time

import pytest

from examples.compare import read_result
from jobmanager import Client
from jobmanager.errors import NoResultError, ResultTooLargeError
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS, Configuration
from jobmanager.model.operators import ParquetSink, ResultSink
from jobmanager.runtime.jobstore import store_root
from tests.jobmanager.runtime.jobs import FAST
from tests.jobmanager.runtime.sql_jobs import (
    AGGREGATE,
    aggregate_job,
    expected_aggregate,
    expected_join,
    join_job,
    write_tables,
)

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {**FAST, NUMBER_OF_TASK_SLOTS.key: 2}


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("sql-tables"))


def result_sink() -> ResultSink:
    return ResultSink(f"{store_root(Configuration())}/results/{os.urandom(8).hex()}")


def wait_until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.1)


def test_a_hashed_aggregate_comes_back_to_the_client_and_goes_with_the_job(client, tables):
    sink = result_sink()
    handle = client.submit(aggregate_job(tables, sink), config=CONFIG)
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause

    table = result.to_arrow()
    assert table.column_names == ["key", "total"]
    assert dict(zip(table["key"].to_pylist(), table["total"].to_pylist())) == expected_aggregate()
    assert sorted(result.to_pandas()["key"]) == sorted(expected_aggregate())
    assert result.vertices["scan"].parallelism == 2

    named = dataclasses.replace(
        result, output=dataclasses.replace(result.output, columns=("k", "k"))
    )  # a query may name two columns alike
    assert named.to_arrow().column_names == ["k", "k"]
    small = dataclasses.replace(result, output=dataclasses.replace(result.output, max_bytes=10))
    with pytest.raises(ResultTooLargeError) as too_large:
        small.to_arrow()
    message = str(too_large.value)
    assert "over client.result.max-size, 10 B" in message and "uncompressed" in message
    assert 'output="s3://bucket/out"' in message and "tidal sql ... -o OUT" in message

    assert os.path.isdir(sink.path)
    handle.release()
    wait_until(lambda: not os.path.exists(sink.path), "the collected result removed on release")
    with pytest.raises(NoResultError, match="cannot be read"):
        result.to_arrow()


def test_a_broadcast_join_writes_its_result_where_the_user_said(client, tables, tmp_path):
    out = tmp_path / "joined"
    result = client.submit(join_job(tables, ParquetSink(str(out))), config=CONFIG).wait(timeout=240)
    assert result.succeeded, result.cause
    table = read_result(out)
    assert dict(zip(table["n_name"].to_pylist(), table["total"].to_pylist())) == expected_join()
    with pytest.raises(NoResultError, match="is not a query"):
        result.to_arrow()


def test_pieces_of_one_task_vertices_run_as_one_chained_task(client, tables):
    graph = aggregate_job(
        tables, result_sink(), scan_parallelism=1, agg_parallelism=1, name="sql-chained"
    )
    handle = client.submit(graph, config=CONFIG)
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    assert result.vertices["agg"].chain == "scan -> agg -> result"
    assert result.vertices["scan"].spark_jobs >= 1
    table = result.to_arrow()
    assert dict(zip(table["key"].to_pylist(), table["total"].to_pylist())) == expected_aggregate()
    assert AGGREGATE in handle.explain()
    handle.release()


def test_sql_spark_refuses_fails_the_job_at_its_first_attempt(client, tables):
    graph = aggregate_job(
        tables,
        result_sink(),
        name="sql-refused",
        agg_sql="SELECT l_key, SUM(no_such_column) FROM in0 GROUP BY l_key",
    )
    handle = client.submit(graph, config=CONFIG)
    result = handle.wait(timeout=240)
    assert result.status == "FAILED"
    assert "SqlRefused: vertex 'agg': Spark refused its SQL" in result.cause
    assert "SUM(no_such_column)" in result.cause and "UNRESOLVED_COLUMN" in result.cause
    agg = result.vertices["agg"]
    assert agg.deployments == agg.tasks  # no restart, despite 5 allowed
    with pytest.raises(NoResultError, match="FAILED, so it has no result: .*SqlRefused"):
        result.to_arrow()
    handle.release()
