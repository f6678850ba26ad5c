"""Two TaskManager actors on a real local Ray: a consumer on one reads what a producer on the
other wrote, through ``read_chunk``, and everything is reported to a stand-in JobManager.

The two TaskManagers claim different nodes (``taskmanager.node-id``), so the consumer cannot
open the producer's file directly and must fetch it remotely, as on a real cluster."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import ray

from blob import BlobKey
from blob.codec import encode as encode_blob
from jobmanager.messages.codec import decode, encode
from jobmanager.messages.deployment import (
    InputGateDeploymentDescriptor,
    InputSlice,
    ShuffleDescriptors,
)
from jobmanager.messages.events import (
    TaskCanceled,
    TaskFailed,
    TaskFinished,
    TaskRunning,
)
from jobmanager.model.config import TASKMANAGER_NODE_ID, Configuration
from jobmanager.model.operators import ParquetSink, arrow, part_file
from jobmanager.model.sources import FileSource
from jobmanager.runtime.names import resource_manager_handle
from shuffle import IndexRange, PartitionId, ShuffleDescriptor
from shuffle.paths import partition_path
from taskmanager.actor import TaskManagerActor
from tests.taskmanager.harness import JOB, DictBlobs, gate, output, tdd

pytestmark = pytest.mark.runtime

SLOTS = 1


class StandInJobManager:
    """Stands in for the JobManager (not under test here): serves blobs, records reports."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = dict(blobs)
        self.reports: list[bytes] = []

    def put_blob(self, data: bytes) -> str:
        key = BlobKey.of(data).digest
        self.blobs[key] = data
        return key

    def get_blob(self, key_hex: str) -> bytes:
        return self.blobs[key_hex]

    def report_many(self, batch: bytes) -> None:
        self.reports.extend(decode(batch))

    def reported(self) -> list:
        return list(self.reports)


@pytest.fixture
def local_ray(ray_cluster):
    """The tests' one local Ray cluster (``tests/conftest.py``): no second one to start. The
    TaskManagers here are started directly, not leased from the ResourceManager, so the idle
    ones it keeps from earlier tests (for minutes, holding the cluster's CPUs) are stopped
    first: otherwise Ray holds these back until they time out (two minutes in one run)."""
    try:
        manager = resource_manager_handle()
    except ValueError:  # no job has run on the cluster yet
        return ray_cluster
    for tm_id in ray.get(manager.describe.remote())["idle"]:
        ray.get(manager.forget.remote(tm_id))
    return ray_cluster


def events_of(job_manager) -> list:
    return ray.get(job_manager.reported.remote())


def wait_for(job_manager, done, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while True:
        events = events_of(job_manager)
        found = [event for event in events if done(event)]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no such report within {timeout}s: {events}"
        time.sleep(0.1)


def start_task_manager(name: str, node: str, job_manager, root: str):
    """Started exactly as the ResourceManager starts TaskManagers, then attached to the job as
    the JobManager attaches them."""
    actor = ray.remote(TaskManagerActor).options(
        name=name, namespace="tidal", num_cpus=SLOTS, max_concurrency=SLOTS + 8, lifetime=None
    )
    config = Configuration({TASKMANAGER_NODE_ID.key: node}).to_bytes()
    handle = actor.remote(name, SLOTS, config, root + "-work")
    ray.get(handle.attach.remote(JOB, job_manager, root))
    return handle


def with_double(table: pa.Table) -> pa.Table:
    return table.append_column("double", pc.multiply(table["value"], 2))


def test_a_consumer_reads_a_remote_producers_partition_through_read_chunk(local_ray, tmp_path):
    source_path = tmp_path / "values.parquet"
    values = pa.table({"key": [i % 13 for i in range(500)], "value": list(range(500))})
    pq.write_table(values, source_path)
    sink = ParquetSink(str(tmp_path / "out"))
    blobs = DictBlobs()
    producer_code = blobs.code(arrow(with_double), [FileSource(str(source_path))])
    sink_code = blobs.code(sink)
    job_manager = ray.remote(StandInJobManager).options(num_cpus=0).remote(blobs.data)
    roots = {name: str(tmp_path / f"shuffle-{name}") for name in ("tm-a", "tm-b")}
    producer_tm = start_task_manager("tm-a", "node-a", job_manager, roots["tm-a"])
    consumer_tm = start_task_manager("tm-b", "node-b", job_manager, roots["tm-b"])

    a, b = ray.get([producer_tm.describe.remote(), consumer_tm.describe.remote()])
    assert (a["node"], b["node"]) == ("node-a", "node-b")
    assert a["shuffle_root"] == roots["tm-a"] and a["pid"] != b["pid"]
    assert ray.get(producer_tm.ping.remote()) == a["pid"]

    producer = tdd("producer", producer_code, outputs=[output("producer->sink", 4)])
    ray.get(producer_tm.deploy.remote(encode(producer)))
    produced = wait_for(job_manager, lambda e: isinstance(e, TaskFinished))
    assert produced.metrics.rows_out == 500

    pid = PartitionId("producer->sink", 0)
    remote = ShuffleDescriptor(pid, "tm-a", "node-a", partition_path(roots["tm-a"], pid), 4)
    payload_key = ray.get(job_manager.put_blob.remote(encode_blob([remote.to_list()])))
    offloaded = InputGateDeploymentDescriptor(
        "producer->sink",
        (InputSlice(IndexRange(0, 0), IndexRange(0, 3)),),
        ShuffleDescriptors(0, 1, blob_key=payload_key),  # fetched through get_blob
    )
    consumer = tdd("sink", sink_code, inputs=[offloaded])
    ray.get(consumer_tm.deploy.remote(encode(consumer)))
    finished = wait_for(job_manager, lambda e: isinstance(e, TaskFinished) and e.vertex == "sink")

    written = pq.read_table(part_file(sink, JOB, 0, 0)).sort_by("value")
    assert written.equals(with_double(values))
    assert finished.metrics.bytes_in > 0 and finished.metrics.rows_in == 500
    assert not os.path.exists(partition_path(roots["tm-b"], pid))  # nothing copied locally

    ray.get(producer_tm.release.remote(encode(((pid,), (0,)))))
    assert not os.path.exists(partition_path(roots["tm-a"], pid))
    retry = tdd("sink", sink_code, attempt=1, inputs=[offloaded])
    before_ms = time.time_ns() // 1_000_000
    ray.get(consumer_tm.deploy.remote(encode(retry)))
    lost = wait_for(job_manager, lambda e: isinstance(e, TaskFailed))
    assert (lost.vertex, lost.attempt, lost.lost_partition) == ("sink", 1, pid)
    assert lost.error.startswith("PartitionNotFound: ") and "task manager tm-a" in lost.error
    assert before_ms <= lost.time_ms <= time.time_ns() // 1_000_000

    gone = ShuffleDescriptor(pid, "tm-gone", "node-c", partition_path(roots["tm-a"], pid), 4)
    unreachable = tdd(
        "sink", sink_code, attempt=2, inputs=[gate("producer->sink", [gone], [((0, 0), (0, 3))])]
    )
    ray.get(consumer_tm.deploy.remote(encode(unreachable)))
    lost = wait_for(job_manager, lambda e: isinstance(e, TaskFailed) and e.attempt == 2)
    assert lost.lost_partition == pid and lost.error.startswith("PartitionUnreachable: ")

    ray.get(consumer_tm.cancel.remote("never-deployed", 0, 0))
    assert wait_for(job_manager, lambda e: isinstance(e, TaskCanceled)) == TaskCanceled(
        "never-deployed", 0, 0
    )
    # a task says it runs before it ends, never after (a task that ended before its report
    # went out is reported ended only: how many TaskRunning reports there are is a race)
    events = events_of(job_manager)
    ended = {
        (e.vertex, e.subtask, e.attempt): i
        for i, e in enumerate(events)
        if isinstance(e, (TaskFinished, TaskFailed, TaskCanceled))
    }
    running = [
        (i, (e.vertex, e.subtask, e.attempt))
        for i, e in enumerate(events)
        if isinstance(e, TaskRunning)
    ]
    assert all(i < ended[key] for i, key in running), events

    ray.get(producer_tm.detach.remote(JOB))  # the job leaves: its files go, the process stays
    assert not os.path.exists(roots["tm-a"])
    assert ray.get(producer_tm.describe.remote())["job"] is None
    with pytest.raises(ray.exceptions.RayTaskError, match=f"has left job {JOB}"):
        # the job's own attach, arriving after the detach (two callers: Ray may reorder them)
        ray.get(producer_tm.attach.remote(JOB, job_manager, roots["tm-a"]))
    ray.get(consumer_tm.detach.remote("never-attached"))  # a detach that overtook its attach
    with pytest.raises(ray.exceptions.RayTaskError, match="has left job never-attached"):
        ray.get(consumer_tm.attach.remote("never-attached", job_manager, roots["tm-b"] + "-x"))
    ray.get(producer_tm.attach.remote("next-job", job_manager, roots["tm-a"] + "-next"))
    assert ray.get(producer_tm.describe.remote())["job"] == "next-job"

    ray.get([producer_tm.shutdown.remote(), consumer_tm.shutdown.remote()])
    assert not os.path.exists(roots["tm-b"]) and not os.path.exists(roots["tm-a"] + "-next")
    for handle in (producer_tm, consumer_tm, job_manager):
        ray.kill(handle)
