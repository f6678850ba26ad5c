"""What a JobManager that takes a job over finds in its store, and the ResourceManager's death:
a torn tail is cut off and the job goes on; a corrupt record, a missing store and an
unreachable one are clear errors naming the store; a job whose ResourceManager is killed
finishes; with recovery off, a dead JobManager is a clear error and its job is cleaned up.
Real Ray, real processes killed by pid; Arrow jobs, so no JVM."""

from __future__ import annotations

import os
import struct

import pyarrow.parquet as pq
import pytest
import ray

from jobmanager import Client, JobManagerLost, JobStoreError, ParquetSink
from jobmanager.model.config import (
    JOB_RECOVERY_ENABLED,
    JOBSTORE_DIR,
    NUMBER_OF_TASK_SLOTS,
    Configuration,
)
from jobmanager.model.operators import staging_dir
from jobmanager.runtime.jobstore import JobStore, store_root
from jobmanager.runtime.names import NAMESPACE, RESOURCE_MANAGER
from tests.jobmanager.runtime.failover_jobs import PARTS, failover_job, staging_job, write_data
from tests.jobmanager.runtime.jobs import FAST
from tests.jobmanager.runtime.test_failover_on_ray import eventually, started, vertex

pytestmark = pytest.mark.runtime

CONFIG = {**FAST, NUMBER_OF_TASK_SLOTS.key: 2}
HEADER = struct.Struct("<III")
SEGMENT_HEADER = 16  # TIDALLOG, the format version, their CRC-32 (runtime.eventlog)


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


@pytest.fixture
def held(client, tmp_path):
    """A job held with one source task finished and three waiting at the gate."""
    data, gate, out = str(tmp_path / "data"), tmp_path / "gate", str(tmp_path / "out")
    gate.mkdir()
    expected = write_data(data)
    handle = client.submit(
        failover_job(data, out, str(gate), at="source", pyspark=False), config=CONFIG
    )
    eventually(
        lambda: started(gate) == PARTS - 1 and vertex(handle, "read").finished == 1,
        "one source task finished and three waiting",
    )
    yield handle, gate, out, expected
    handle.release()


def first_segment(handle) -> str:
    store = JobStore(store_root(Configuration()), handle.job_id)
    events = os.path.join(store.path, "events")
    return os.path.join(events, sorted(os.listdir(events))[0])


def kill_job_manager(handle) -> None:
    os.kill(handle.status().pid, 9)


def sums(out: str) -> dict[int, int]:
    table = pq.read_table(out)
    return dict(zip(table.column("key").to_pylist(), table.column("value_sum").to_pylist()))


def test_a_torn_tail_is_cut_off_and_the_job_goes_on(held):
    handle, gate, out, expected = held
    with open(first_segment(handle), "ab") as log:
        log.write(HEADER.pack(1000, 0, 0)[:7])  # half a header: a write the crash cut short
    kill_job_manager(handle)
    (gate / "open").touch()
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    assert sums(out) == expected


def test_a_corrupt_record_fails_the_job_naming_the_store(held):
    handle, gate, out, _ = held
    path = first_segment(handle)
    with open(path, "r+b") as log:
        log.seek(SEGMENT_HEADER)
        length, _, _ = HEADER.unpack(log.read(HEADER.size))
        log.seek(SEGMENT_HEADER + HEADER.size + length + HEADER.size + 2)  # into record 1's payload
        byte = log.read(1)
        log.seek(-1, os.SEEK_CUR)
        log.write(bytes([byte[0] ^ 0xFF]))
    kill_job_manager(handle)
    (gate / "open").touch()
    result = handle.wait(timeout=120)
    assert result.status == "FAILED"
    assert "could not be recovered" in result.cause and handle.job_id in result.cause
    assert "corrupt" in result.cause and path.split("/events/")[0] in result.cause
    assert not os.path.exists(out)
    assert not any(".tidal-staging" in name for name in os.listdir(os.path.dirname(out)))


def test_a_missing_store_fails_the_job_naming_the_store(held):
    handle, gate, out, _ = held
    store = os.path.dirname(os.path.dirname(first_segment(handle)))
    kill_job_manager(handle)
    os.rename(store, f"{store}.away")  # gone before the new JobManager looks
    (gate / "open").touch()
    result = handle.wait(timeout=120)
    assert result.status == "FAILED"
    assert store in result.cause and "could not be recovered" in result.cause
    assert not any(".tidal-staging" in name for name in os.listdir(os.path.dirname(out)))


def test_an_unreachable_store_is_an_error_at_submit(client, tmp_path):
    data, gate = str(tmp_path / "data"), tmp_path / "gate"
    write_data(data)
    job = failover_job(data, str(tmp_path / "out"), str(gate), at="nowhere", pyspark=False)
    with pytest.raises(JobStoreError, match="ftp://127.0.0.1:9/jobs"):
        client.submit(job, config={**CONFIG, JOBSTORE_DIR.key: "ftp://127.0.0.1:9/jobs"})


def test_a_killed_resource_manager_is_restarted_and_the_job_finishes(held):
    handle, gate, out, expected = held
    rm = ray.get_actor(RESOURCE_MANAGER, namespace=NAMESPACE)
    before = ray.get(rm.describe.remote())
    assert handle.job_id in before["leased"].values()
    os.kill(before["pid"], 9)
    (gate / "open").touch()
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    assert sums(out) == expected
    after = ray.get(rm.describe.remote())
    assert after["pid"] != before["pid"]
    assert set(before["leased"]) <= set(after["idle"]) | set(after["leased"])


def test_with_recovery_off_a_dead_jobmanager_is_a_clear_error_and_its_job_is_cleaned_up(
    client, tmp_path
):
    data, gate, out = str(tmp_path / "data"), tmp_path / "gate", str(tmp_path / "out")
    gate.mkdir()
    write_data(data)
    config = {**CONFIG, JOB_RECOVERY_ENABLED.key: False}
    handle = client.submit(staging_job(data, out, str(gate)), config=config)
    staging = staging_dir(ParquetSink(out), handle.job_id)
    eventually(lambda: os.path.isdir(staging) and os.listdir(staging), "the first part staged")
    store = os.path.dirname(os.path.dirname(first_segment(handle)))
    kill_job_manager(handle)
    with pytest.raises(JobManagerLost, match="job recovery is off"):
        handle.wait(timeout=60)
    eventually(
        lambda: not os.path.exists(staging) and not os.path.exists(store),
        "the ResourceManager to clean the job up",
        timeout=60,
    )
    assert not os.path.exists(out)
