"""The task runtime with no Ray: real Parquet sources, real partition files written by earlier
tasks of the same test, a recording reporter and blobs in a dict."""

from __future__ import annotations

import os
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from jobmanager.messages.events import TaskCanceled, TaskFailed, TaskFinished, TaskRunning
from jobmanager.model.operators import ParquetSink, arrow, part_file
from jobmanager.model.sources import FileSource
from jobmanager.model.splits import assign_splits
from shuffle import IndexRange, PartitionFileReader, PartitionId, hash_columns, read_range
from taskmanager.cancellation import CancelToken
from taskmanager.runner import run_task
from tests.taskmanager.harness import JOB, DictBlobs, descriptor, environment, gate, output, tdd

ROWS = 3_000


def orders(num_rows: int = ROWS) -> pa.Table:
    rng = np.random.default_rng(7)
    return pa.table(
        {
            "key": pa.array(rng.integers(0, 500, num_rows), pa.int64()),
            "amount": pa.array(rng.random(num_rows) * 100),
            "region": pa.array([f"r{i % 3}" for i in range(num_rows)]),
        }
    )


@pytest.fixture
def source(tmp_path) -> FileSource:
    """Orders in one Parquet file of three row groups: three splits at a small split size."""
    path = tmp_path / "data" / "orders.parquet"
    path.parent.mkdir()
    pq.write_table(orders(), path, row_group_size=ROWS // 3)
    return FileSource(str(path))


@pytest.fixture
def blobs() -> DictBlobs:
    return DictBlobs()


def with_total(table: pa.Table) -> pa.Table:
    return table.append_column("total", pc.multiply(table["amount"], 2))


def explode(table: pa.Table) -> pa.Table:
    raise ValueError(f"bad row {table.num_rows}")


def not_a_table(table: pa.Table):
    return table.to_pylist()


def sorted_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: tuple(map(str, row.values())))


def produce(env, blobs, source, *, subpartitions=4, parallelism=1, subtask=0):
    """Run a pass-through producer of ``source`` hashed on key; return its TaskFinished."""
    deployment = tdd(
        "orders",
        blobs.code(None, [source]),
        subtask=subtask,
        parallelism=parallelism,
        split_target_bytes=1,
        outputs=[output("orders->agg", subpartitions, index=subtask)],
    )
    event = run_task(deployment, env, CancelToken())
    assert isinstance(event, TaskFinished), event
    return event


def test_an_arrow_task_partitions_its_output_and_reports_each_subpartitions_bytes(
    tmp_path, blobs, source
):
    env, reporter = environment(tmp_path / "tm", blobs)
    deployment = tdd(
        "enrich",
        blobs.code(arrow(with_total), [source]),
        outputs=[
            output("enrich->agg", 4, "hash", ("key",), filter_column="region"),
            output("enrich->side", 1, "broadcast"),
        ],
    )

    finished = run_task(deployment, env, CancelToken())

    assert [type(e) for e in reporter.events] == [TaskRunning, TaskFinished]
    assert reporter.events[-1] == finished
    hashed, broadcast = finished.produced
    with PartitionFileReader(
        env.registry.path_for(PartitionId("enrich->agg", 0)), PartitionId("enrich->agg", 0)
    ) as reader:
        assert hashed.counts().tolist() == reader.index.dense("length").tolist()
        for subpartition in range(4):
            rows = reader.read_range(IndexRange(subpartition, subpartition))
            assert (hash_columns(rows, ("key",)) % 4 == subpartition).all()
        assert sum(reader.index.entries["rows"]) == ROWS
    assert hashed.filter_values == ("r0", "r1", "r2")
    phases = dict(finished.metrics.phases)
    assert {"code", "read_input", "arrow_function", "write_output", "other"} <= set(phases)
    assert abs(sum(phases.values()) - finished.metrics.duration_ms) <= max(
        2, 0.05 * finished.metrics.duration_ms
    )
    assert broadcast.counts().size == 1 and broadcast.total > 0
    whole = read_range(
        env.registry.path_for(PartitionId("enrich->side", 0)),
        PartitionId("enrich->side", 0),
        IndexRange(0, 0),
    )
    assert sorted_rows(whole) == sorted_rows(with_total(orders()))
    metrics = finished.metrics
    assert (metrics.rows_in, metrics.rows_out) == (ROWS, ROWS)
    assert metrics.bytes_in == sum(s.length for s in source.splits(16 << 20))
    assert metrics.duration_ms >= 0
    assert not env.spark.started, "an Arrow task must not start a JVM"


def test_a_task_reads_a_range_of_subpartitions_of_several_partitions(tmp_path, blobs, source):
    env, reporter = environment(tmp_path / "tm", blobs)
    for subtask in range(3):
        produce(env, blobs, source, parallelism=3, subtask=subtask)
    descriptors = [descriptor(env, "orders->agg", i, 4) for i in range(3)]
    slices = [((0, 1), (1, 2)), ((2, 2), (0, 3))]  # subpartitions 1-2 of p0, p1; all of p2
    consumer = tdd(
        "agg",
        inputs=[gate("orders->agg", descriptors, slices)],
        outputs=[output("agg->sink", 1, "forward")],
    )

    finished = run_task(consumer, env, CancelToken())

    assert isinstance(finished, TaskFinished), finished
    read = read_range(
        env.registry.path_for(PartitionId("agg->sink", 0)),
        PartitionId("agg->sink", 0),
        IndexRange(0, 0),
    )
    produced = [source.read(splits) for splits in assign_splits(source.splits(1), 3)]
    expected = [
        t.filter(pa.array(np.isin(hash_columns(t, ("key",)) % 4, [1, 2]))) for t in produced[:2]
    ] + [produced[2]]
    assert sorted_rows(read) == sorted_rows(pa.concat_tables(expected))
    ranges = [(0, IndexRange(1, 2)), (1, IndexRange(1, 2)), (2, IndexRange(0, 3))]
    stored = 0
    for index, subpartitions in ranges:
        with PartitionFileReader(descriptors[index].path, descriptors[index].partition_id) as r:
            stored += r.index.range_layout(subpartitions).data_size
    assert finished.metrics.bytes_in == stored
    assert finished.metrics.rows_in == finished.metrics.rows_out == read.num_rows


def test_offloaded_shuffle_descriptors_are_fetched_once_per_task_manager(tmp_path, blobs, source):
    env, _ = environment(tmp_path / "tm", blobs)
    produce(env, blobs, source)
    offloaded = gate(
        "orders->agg", [descriptor(env, "orders->agg", 0, 4)], [((0, 0), (0, 3))], offload_to=blobs
    )
    for subtask in range(2):
        consumer = tdd("agg", subtask=subtask, parallelism=2, inputs=[offloaded])
        assert isinstance(run_task(consumer, env, CancelToken()), TaskFinished)
    assert blobs.fetches.count(offloaded.descriptors.blob_key) == 1


def test_a_missing_input_partition_is_reported_as_lost(tmp_path, blobs):
    env, reporter = environment(tmp_path / "tm", blobs)
    never_written = descriptor(env, "orders->agg", 5, 4)
    consumer = tdd(
        "agg",
        inputs=[gate("orders->agg", [never_written], [((5, 5), (0, 1))])],
        outputs=[output("agg->sink", 1, "forward")],
    )

    failed = run_task(consumer, env, CancelToken())

    assert isinstance(failed, TaskFailed)
    assert failed.lost_partition == PartitionId("orders->agg", 5)
    assert failed.error.startswith("PartitionNotFound: no file for partition orders->agg#5")
    assert failed.time_ms == 1_700_000_000_000
    assert PartitionId("agg->sink", 0) not in env.registry


def test_a_truncated_input_file_is_reported_as_lost(tmp_path, blobs, source):
    env, _ = environment(tmp_path / "tm", blobs)
    produce(env, blobs, source)
    path = descriptor(env, "orders->agg", 0, 4).path
    os.truncate(path, os.path.getsize(path) - 10)
    consumer = tdd(
        "agg",
        inputs=[gate("orders->agg", [descriptor(env, "orders->agg", 0, 4)], [((0, 0), (0, 3))])],
    )

    failed = run_task(consumer, env, CancelToken())

    assert isinstance(failed, TaskFailed)
    assert failed.lost_partition == PartitionId("orders->agg", 0)


def test_a_raising_function_fails_the_task_with_its_traceback(tmp_path, blobs, source):
    env, reporter = environment(tmp_path / "tm", blobs)
    deployment = tdd(
        "explode",
        blobs.code(arrow(explode), [source]),
        attempt=2,
        outputs=[output("explode->next", 2)],
    )

    failed = run_task(deployment, env, CancelToken())

    assert [type(e) for e in reporter.events] == [TaskRunning, TaskFailed]
    assert (failed.vertex, failed.subtask, failed.attempt) == ("explode", 0, 2)
    assert failed.error.startswith(f"ValueError: bad row {ROWS}\n")
    assert "Traceback (most recent call last)" in failed.error
    assert 'test_runner.py", line' in failed.error and "in explode" in failed.error
    assert failed.lost_partition is None
    assert not env.shuffle.path_for(PartitionId("explode->next", 0), 2).exists()


def test_an_arrow_function_must_return_a_table(tmp_path, blobs, source):
    env, _ = environment(tmp_path / "tm", blobs)
    failed = run_task(tdd("listy", blobs.code(arrow(not_a_table), [source])), env, CancelToken())
    assert isinstance(failed, TaskFailed)
    assert failed.error.startswith(
        "OutputTypeError: vertex 'listy': arrow(not_a_table) returned list"
    )


def test_a_sink_writes_its_part_file_even_when_it_read_no_rows(tmp_path, blobs, source):
    env, _ = environment(tmp_path / "tm", blobs)
    sink = ParquetSink(str(tmp_path / "out"))
    code = blobs.code(sink, [source])
    for subtask in range(4):  # three splits over four subtasks: subtask 3 reads nothing
        deployment = tdd("sink", code, subtask=subtask, parallelism=4, split_target_bytes=1)
        finished = run_task(deployment, env, CancelToken())
        assert isinstance(finished, TaskFinished) and finished.produced == ()
    parts = [pq.read_table(part_file(sink, JOB, subtask, 0)) for subtask in range(4)]
    assert sorted_rows(pa.concat_tables(parts)) == sorted_rows(orders())
    assert parts[3].num_rows == 0 and parts[3].schema.names == ["key", "amount", "region"]
    assert finished.metrics.rows_out == 0


def test_a_task_cancelled_while_its_function_runs_reports_canceled_and_leaves_no_file(
    tmp_path, blobs, source
):
    env, reporter = environment(tmp_path / "tm", blobs)
    deployment = tdd(
        "slow", blobs.code(arrow(wait_for_release), [source]), outputs=[output("slow->next", 2)]
    )
    token = CancelToken()
    worker = threading.Thread(target=run_task, args=(deployment, env, token))
    worker.start()
    assert STARTED.wait(10)
    token.cancel()
    RELEASE.set()
    worker.join(10)

    assert [type(e) for e in reporter.events] == [TaskRunning, TaskCanceled]
    assert reporter.events[-1] == TaskCanceled("slow", 0, 0)
    assert not env.shuffle.path_for(PartitionId("slow->next", 0)).exists()
    assert list((env.shuffle.root / ".tasks").glob("*")) == []


STARTED = threading.Event()
RELEASE = threading.Event()


def wait_for_release(table: pa.Table) -> pa.Table:
    STARTED.set()
    RELEASE.wait(10)
    return table
