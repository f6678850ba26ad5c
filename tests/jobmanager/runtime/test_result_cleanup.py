"""A query's result collected for its client is Tidal's own: cleaning the job up removes it
with the store, and leaves a result the user asked for where it is. The job's first event
names those results last, so an event log written before it still decodes. No Ray."""

from __future__ import annotations

import msgpack
import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.runtime.cleanup import clean_up_job
from jobmanager.runtime.jobstore import JobStore


def submitted(sink_paths=(), result_paths=()) -> ev.JobSubmitted:
    return ev.JobSubmitted(
        "q", "graph", (), 1.0, 2, (), tuple(sink_paths), (), (), tuple(result_paths)
    )


def published(path) -> str:
    path.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1]}), path / "part-00000.parquet")
    (path / "_SUCCESS").write_text('{"job": "j1", "files": ["part-00000.parquet"]}')
    return str(path)


def test_cleaning_a_job_up_removes_its_collected_result_not_its_users_output(tmp_path):
    result = published(tmp_path / "jobs" / "results" / "abc")
    users = published(tmp_path / "out")
    staging = tmp_path / "out.tidal-staging-j1"  # the user's sink, staged by an unfinished job
    staging.mkdir()
    store = JobStore(str(tmp_path / "jobs"), "j1")
    store.create()
    log = store.open_log(1 << 20)
    log.append(submitted([users, result], [result]))
    log.flush()

    clean_up_job("j1", store)  # as the ResourceManager does, reading the job from its store

    assert not (tmp_path / "jobs" / "results" / "abc").exists()
    assert not store.exists()
    assert (tmp_path / "out" / "part-00000.parquet").exists() and not staging.exists()


def test_a_job_submitted_before_results_were_collected_still_decodes():
    fields = ["JobSubmitted", "q", "graph", (), 1.0, 2, (), ("/out",), (), ()]  # no result_paths
    old = msgpack.packb(msgpack.ExtType(1, msgpack.packb(fields)))
    assert decode(old) == submitted(["/out"])
    assert decode(old).result_paths == ()
    assert decode(encode(submitted(["/r"], ["/r"]))).result_paths == ("/r",)
