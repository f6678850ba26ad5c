"""Committing what Spark's ``df.write`` shapes give a sink: partition directories, CSV files
and appending. The commit publishes exactly the final attempts (a partitioned subtask may have
written no file, only its marker), readers that follow the manifest (Tidal's ``FileSource``)
see the target before or after, whole, and a commit done again after a JobManager died at any
step ends the same, an abort instead taking back what it had begun; on a local disk and on an
object store (fsspec's in-memory file system standing in for one)."""

import os
import shutil
import uuid
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager.model.operators import ParquetSink, staging_dir
from jobmanager.model.sources import FileSource, SourceError
from jobmanager.runtime import sinks
from taskmanager.sink_writer import write_sink

JOB, LATER = "job1", "job2"


class Died(BaseException):
    """The JobManager process stopped here (not an Exception: nothing may catch it)."""


def batch(first: int, days=("2024-01-01", "2024-01-02")) -> pa.Table:
    return pa.table(
        {"d": [days[i % len(days)] for i in range(4)], "v": list(range(first, first + 4))}
    )


def stage(sink, job=JOB, first=0) -> dict[int, int]:
    """Subtask 0 twice (its first attempt lost), subtask 1 once, subtask 2 with no rows; the
    final attempts."""
    write_sink(batch(100), sink, job, 0, 0)
    write_sink(batch(first), sink, job, 0, 1)
    write_sink(batch(first + 4, ("2024-01-03",)), sink, job, 1, 0)
    write_sink(batch(0).slice(0, 0), sink, job, 2, 0)
    return {0: 1, 1: 0, 2: 0}


def seen(path) -> list | None:
    """The rows a Tidal reader sees at ``path``: (partition values..., v)."""
    fs, root = fsspec.core.url_to_fs(path)
    if not fs.exists(root):
        return None
    try:
        files = FileSource(path, partitioning="hive").data_files()
    except SourceError:
        return []
    rows = []
    for file in files:
        with fs.open(fsspec.core.url_to_fs(file.path)[1], "rb") as handle:
            values = [v for _, v in file.partition_values]
            rows += [(*values, v) for v in pq.read_table(handle).column("v").to_pylist()]
    return sorted(rows)


FIRST = sorted(
    [
        ("2024-01-01", 0),
        ("2024-01-02", 1),
        ("2024-01-01", 2),
        ("2024-01-02", 3),
        *[("2024-01-03", v) for v in range(4, 8)],
    ]
)
SECOND = sorted([(d, v + 10) for d, v in FIRST])


def listing(root) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(f, n), root) for f, _, ns in os.walk(root) for n in ns
    )


def test_a_partitioned_commit_publishes_partition_directories_without_markers(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), partition_by=("d",))
    finals = stage(sink)
    assert sinks.commit(sink, JOB, finals) == 3
    assert listing(sink.path) == [
        "_SUCCESS",
        "d=2024-01-01/part-00000.parquet",
        "d=2024-01-02/part-00000.parquet",
        "d=2024-01-03/part-00001.parquet",
    ]
    assert sinks.manifest(sink.path)["files"] == listing(sink.path)[1:]
    assert seen(sink.path) == FIRST
    assert sinks.commit(sink, JOB, finals) == 3 and seen(sink.path) == FIRST
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_a_partitioned_commit_needs_every_final_attempts_marker(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), partition_by=("d",))
    finals = stage(sink)
    os.remove(os.path.join(staging_dir(sink, JOB), "_tidal-done-00002-0"))
    with pytest.raises(sinks.SinkError, match=r"no output from subtasks \[2\]"):
        sinks.commit(sink, JOB, finals)


def test_a_csv_commit_publishes_csv_part_files(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), format="csv", csv_header=True)
    write_sink(batch(0), sink, JOB, 0, 0)
    write_sink(batch(4), sink, JOB, 1, 0)
    assert sinks.commit(sink, JOB, {0: 0, 1: 0}) == 2
    assert listing(sink.path) == ["_SUCCESS", "part-00000.csv", "part-00001.csv"]
    assert (
        Path(os.path.join(sink.path, "part-00001.csv"))
        .read_text()
        .startswith('"d","v"\n"2024-01-01",4\n')
    )


def test_modes_error_and_ignore_leave_an_existing_target_alone(tmp_path):
    first = ParquetSink(str(tmp_path / "out"), partition_by=("d",))
    sinks.commit(first, JOB, stage(first))
    for mode in ("error", "ignore"):
        sink = ParquetSink(first.path, partition_by=("d",), mode=mode)
        finals = stage(sink, LATER, first=10)
        if mode == "error":
            with pytest.raises(sinks.SinkError, match="already exists"):
                sinks.commit(sink, LATER, finals)
            sinks.abort(sink, LATER)
        else:
            assert sinks.commit(sink, LATER, finals) == 0
        assert seen(first.path) == FIRST and sorted(os.listdir(tmp_path)) == ["out"]
    assert sinks.target_exists(first.path) and not sinks.target_exists(str(tmp_path / "nothing"))


def appended_sink(tmp_path, spark_marker=False):
    """A partitioned result committed by JOB (or, ``spark_marker``, one with Spark's empty
    ``_SUCCESS``, which names no files), and LATER's staged append to it."""
    first = ParquetSink(str(tmp_path / "out"), partition_by=("d",))
    sinks.commit(first, JOB, stage(first))
    if spark_marker:
        open(os.path.join(first.path, "_SUCCESS"), "w").close()
    sink = ParquetSink(first.path, partition_by=("d",), mode="append")
    return sink, stage(sink, LATER, first=10)


@pytest.mark.parametrize("spark_marker", [False, True], ids=["tidal result", "spark result"])
def test_an_append_adds_files_named_for_the_job_into_the_partition_directories(
    tmp_path, spark_marker
):
    sink, finals = appended_sink(tmp_path, spark_marker)
    assert sinks.commit(sink, LATER, finals) == 3
    assert seen(sink.path) == sorted(FIRST + SECOND)
    assert "d=2024-01-03/part-00001-job2.parquet" in listing(sink.path)
    assert "d=2024-01-03/part-00001.parquet" in sinks.manifest(sink.path)["files"]
    assert sinks.commit(sink, LATER, finals) == 3 and seen(sink.path) == sorted(FIRST + SECOND)
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_an_append_to_a_missing_target_creates_it(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), partition_by=("d",), mode="append")
    assert sinks.commit(sink, JOB, stage(sink)) == 3
    assert seen(sink.path) == FIRST and "d=2024-01-03/part-00001-job1.parquet" in listing(sink.path)


def dying_at(monkeypatch, step, names):
    calls = {"n": 0}

    def dying(real):
        def call(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == step + 1:
                raise Died()
            return real(*args, **kwargs)

        return call

    for owner, name in names:
        monkeypatch.setattr(owner, name, dying(getattr(owner, name)))


LOCAL_STEPS = [(os, "replace"), (os, "remove"), (os, "rmdir"), (shutil, "rmtree")]


@pytest.mark.parametrize("then", ["commit", "abort"])
@pytest.mark.parametrize("step", range(14))
def test_an_append_dying_at_any_step_is_done_again_or_taken_back_whole(
    tmp_path, monkeypatch, step, then
):
    sink, finals = appended_sink(tmp_path)
    with monkeypatch.context() as m:
        dying_at(m, step, LOCAL_STEPS)
        try:
            sinks.commit(sink, LATER, finals)
        except Died:
            pass
    assert seen(sink.path) in (FIRST, sorted(FIRST + SECOND)), "a reader sees half an append"
    if then == "commit":
        sinks.commit(sink, LATER, finals)
        assert seen(sink.path) == sorted(FIRST + SECOND), "the append is missing or twice"
    else:
        published = seen(sink.path) != FIRST
        sinks.abort(sink, LATER)
        assert seen(sink.path) == (sorted(FIRST + SECOND) if published else FIRST)
        if not published:
            assert not [p for p in listing(sink.path) if "job2" in p], "an appended file stayed"
    assert sorted(os.listdir(tmp_path)) == ["out"], "something was left beside the target"


@pytest.mark.parametrize("step", range(10))
def test_a_partitioned_overwrite_dying_at_any_step_ends_the_same_when_done_again(
    tmp_path, monkeypatch, step
):
    first = ParquetSink(str(tmp_path / "out"), partition_by=("d",))
    sinks.commit(first, JOB, stage(first))
    sink = ParquetSink(first.path, partition_by=("d",), mode="overwrite")
    finals = stage(sink, LATER, first=10)
    with monkeypatch.context() as m:
        dying_at(m, step, LOCAL_STEPS)
        try:
            sinks.commit(sink, LATER, finals)
        except Died:
            pass
    assert seen(sink.path) in (FIRST, None, SECOND)
    assert sinks.commit(sink, LATER, finals) == 3
    assert seen(sink.path) == SECOND and sorted(os.listdir(tmp_path)) == ["out"]


# -- an object store: the manifest protocol -------------------------------------------------------


def memory_path() -> str:
    return f"memory://bucket-{uuid.uuid4().hex[:8]}/out"


def test_an_object_store_takes_partitions_csv_and_appends():
    path = memory_path()
    first = ParquetSink(path, partition_by=("d",))
    assert sinks.commit(first, JOB, stage(first)) == 3
    assert seen(path) == FIRST
    assert "d=2024-01-03/part-00001-job1.parquet" in sinks.manifest(path)["files"]
    sink = ParquetSink(path, partition_by=("d",), mode="append")
    assert sinks.commit(sink, LATER, stage(sink, LATER, first=10)) == 3
    assert seen(path) == sorted(FIRST + SECOND)
    csv = ParquetSink(memory_path(), format="csv")
    write_sink(batch(0), csv, JOB, 0, 0)
    assert sinks.commit(csv, JOB, {0: 0}) == 1
    assert sinks.manifest(csv.path)["files"] == [f"part-00000-{JOB}.csv"]


@pytest.mark.parametrize("mode", ["append", "overwrite"])
@pytest.mark.parametrize("step", range(10))
def test_an_object_store_partitioned_commit_dying_at_any_step_ends_the_same(
    monkeypatch, step, mode
):
    path = memory_path()
    first = ParquetSink(path, partition_by=("d",))
    sinks.commit(first, JOB, stage(first))
    sink = ParquetSink(path, partition_by=("d",), mode=mode)
    finals = stage(sink, LATER, first=10)
    fs = type(fsspec.filesystem("memory"))
    with monkeypatch.context() as m:
        dying_at(m, step, [(fs, "copy"), (fs, "pipe_file"), (fs, "rm")])
        try:
            sinks.commit(sink, LATER, finals)
        except Died:
            pass
    after = sorted(FIRST + SECOND) if mode == "append" else SECOND
    assert seen(path) in (FIRST, after), "a reader of the manifest sees half a result"
    assert sinks.commit(sink, LATER, finals) == 3
    assert seen(path) == after
    memory = fsspec.filesystem("memory")
    assert not memory.exists(staging_dir(sink, LATER))
    names = [p for p in memory.find(path)]
    assert len(names) == 1 + (6 if mode == "append" else 3), names
