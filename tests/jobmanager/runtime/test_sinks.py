"""The sink commit survives a JobManager dying at any step: done again, it ends the same, and
the target is never half a result, nor the result twice; on a local disk (rename) and on an
object store (manifest; fsspec's in-memory file system stands in for one here, a real S3 API
server in the multi-node tests)."""

import json
import os
import shutil
import uuid

import fsspec
import pytest

from jobmanager.model.operators import ParquetSink, part_file, staging_dir
from jobmanager.runtime import sinks

JOB = "job1"


class Died(BaseException):
    """The JobManager process stopped here (not an Exception: nothing may catch it)."""


def stage(sink, attempts: dict[int, list[int]]) -> None:
    for subtask, tries in attempts.items():
        for attempt in tries:
            path = part_file(sink, JOB, subtask, attempt)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(f"new {subtask}")


def old_result(path) -> None:
    os.makedirs(path)
    for subtask in range(3):
        with open(os.path.join(path, f"part-{subtask:05d}.parquet"), "w") as f:
            f.write(f"old {subtask}")


def contents(path) -> dict[str, str] | None:
    """The files at ``path`` (the manifest as the job it names and its files)."""
    if not os.path.exists(path):
        return None
    found = {name: open(os.path.join(path, name)).read() for name in sorted(os.listdir(path))}
    if "_SUCCESS" in found:
        manifest = json.loads(found["_SUCCESS"])
        found["_SUCCESS"] = (manifest["job"], *manifest["files"])
    return found


NEW = {
    "_SUCCESS": (JOB, "part-00000.parquet", "part-00001.parquet"),
    "part-00000.parquet": "new 0",
    "part-00001.parquet": "new 1",
}
OLD = {f"part-{i:05d}.parquet": f"old {i}" for i in range(3)}


def test_a_commit_publishes_the_final_attempts_with_a_marker(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"))
    stage(sink, {0: [0, 1], 1: [0]})
    assert sinks.commit(sink, JOB, {0: 1, 1: 0}) == 2
    assert contents(sink.path) == NEW
    assert sinks.committed_by(sink.path) == JOB
    assert not os.path.exists(staging_dir(sink, JOB))
    assert sinks.commit(sink, JOB, {0: 1, 1: 0}) == 2  # again, as a new JobManager would
    assert contents(sink.path) == NEW


def test_a_commit_without_overwrite_refuses_a_target_that_appeared(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"))
    stage(sink, {0: [0], 1: [0]})
    old_result(sink.path)
    with pytest.raises(sinks.SinkError, match="already exists"):
        sinks.commit(sink, JOB, {0: 0, 1: 0})
    sinks.abort(sink, JOB)
    assert contents(sink.path) == OLD and not os.path.exists(staging_dir(sink, JOB))


@pytest.mark.parametrize("old", [False, True], ids=["new target", "overwrite"])
@pytest.mark.parametrize("step", range(8))
def test_a_commit_dying_at_any_step_ends_the_same_when_done_again(tmp_path, monkeypatch, step, old):
    sink = ParquetSink(str(tmp_path / "out"), overwrite=True)
    if old:
        old_result(sink.path)
    stage(sink, {0: [0, 1], 1: [0]})
    calls = {"n": 0}

    def dying(real):
        def call(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == step + 1:
                raise Died()
            return real(*args, **kwargs)

        return call

    with monkeypatch.context() as m:
        m.setattr(os, "replace", dying(os.replace))
        m.setattr(os, "remove", dying(os.remove))
        m.setattr(shutil, "rmtree", dying(shutil.rmtree))
        try:
            sinks.commit(sink, JOB, {0: 1, 1: 0})
        except Died:
            pass
    # the old result whole, nothing (between moving it aside and publishing), or the new whole
    assert contents(sink.path) in (OLD, None, NEW), "half a result is visible"
    assert old or contents(sink.path) != OLD
    sinks.commit(sink, JOB, {0: 1, 1: 0})
    assert contents(sink.path) == NEW
    assert sorted(os.listdir(tmp_path)) == ["out"], "something was left beside the target"


# -- an object store: the manifest protocol -------------------------------------------------------


def object_store_sink(overwrite=False):
    return ParquetSink(f"memory://bucket-{uuid.uuid4().hex[:8]}/out", overwrite=overwrite)


def stage_objects(sink, attempts):
    fs = fsspec.filesystem("memory")
    for subtask, tries in attempts.items():
        for attempt in tries:
            fs.pipe_file(part_file(sink, JOB, subtask, attempt), f"new {subtask}".encode())


def old_objects(sink):
    fs = fsspec.filesystem("memory")
    for subtask in range(3):
        fs.pipe_file(f"{sink.path}/part-{subtask:05d}.parquet", f"old {subtask}".encode())


def published(sink) -> dict | None:
    """What a reader that follows the manifest sees: the listed files, else all of them."""
    fs = fsspec.filesystem("memory")
    if not fs.exists(sink.path):
        return None
    found = sinks.manifest(sink.path)
    names = (
        found["files"] if found else [p.rsplit("/", 1)[-1] for p in fs.ls(sink.path, detail=False)]
    )
    return {name: fs.cat_file(f"{sink.path}/{name}").decode() for name in names}


NEW_OBJECTS = {f"part-{i:05d}-{JOB}.parquet": f"new {i}" for i in range(2)}


def test_an_object_store_commit_publishes_the_final_attempts_in_a_manifest():
    sink = object_store_sink()
    stage_objects(sink, {0: [0, 1], 1: [0]})
    assert sinks.commit(sink, JOB, {0: 1, 1: 0}) == 2
    assert published(sink) == NEW_OBJECTS and sinks.committed_by(sink.path) == JOB
    fs = fsspec.filesystem("memory")
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(sink.path, detail=False)) == [
        "_SUCCESS",
        *sorted(NEW_OBJECTS),
    ]
    assert not fs.exists(staging_dir(sink, JOB))
    assert sinks.commit(sink, JOB, {0: 1, 1: 0}) == 2 and published(sink) == NEW_OBJECTS


def test_an_object_store_commit_refuses_a_target_that_appeared_and_abort_keeps_it():
    sink = object_store_sink()
    stage_objects(sink, {0: [0], 1: [0]})
    old_objects(sink)
    with pytest.raises(sinks.SinkError, match="already exists"):
        sinks.commit(sink, JOB, {0: 0, 1: 0})
    sinks.abort(sink, JOB)
    assert published(sink) == {f"part-{i:05d}.parquet": f"old {i}" for i in range(3)}
    assert sinks.manifest(sink.path) is None  # untouched
    assert not fsspec.filesystem("memory").exists(staging_dir(sink, JOB))


@pytest.mark.parametrize("old", [False, True], ids=["new target", "overwrite"])
@pytest.mark.parametrize("step", range(8))
def test_an_object_store_commit_dying_at_any_step_ends_the_same_when_done_again(
    monkeypatch, step, old
):
    sink = object_store_sink(overwrite=True)
    if old:
        old_objects(sink)
    stage_objects(sink, {0: [0, 1], 1: [0]})
    before = published(sink)
    fs = type(fsspec.filesystem("memory"))
    calls = {"n": 0}

    def dying(real):
        def call(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == step + 1:
                raise Died()
            return real(*args, **kwargs)

        return call

    with monkeypatch.context() as m:
        for method in ("copy", "pipe_file", "rm"):
            m.setattr(fs, method, dying(getattr(fs, method)))
        try:
            sinks.commit(sink, JOB, {0: 1, 1: 0})
        except Died:
            pass
    assert published(sink) in (before, {}, NEW_OBJECTS), (
        "a reader of the manifest sees half a result"
    )
    sinks.commit(sink, JOB, {0: 1, 1: 0})
    assert published(sink) == NEW_OBJECTS
    memory = fsspec.filesystem("memory")
    assert sorted(p.rsplit("/", 1)[-1] for p in memory.ls(sink.path, detail=False)) == [
        "_SUCCESS",
        *sorted(NEW_OBJECTS),
    ], "something of the old result or the staging was left"
    assert not memory.exists(staging_dir(sink, JOB))
