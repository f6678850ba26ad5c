"""The job history, on real files with no cluster: a finished job's archive holds what a
replay needs, reads back to the same facts as its store did, outlives the store, is listed
newest first, and only the newest ``historyserver.archive.retained-jobs`` are kept."""

import os

import cloudpickle
import pytest

from jobmanager.client.report import find_job, history, job_facts
from jobmanager.errors import UnknownJobError
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import ARCHIVE_DIR, JOBSTORE_DIR, Configuration
from jobmanager.runtime.archive import archive_job
from jobmanager.runtime.jobstore import STATUS_FILE, JobStore
from tests.jobmanager.client.report.recorded import (
    START_MS,
    SUMS_CONFIG,
    record,
    sums_bytes,
    sums_job,
)
from tests.jobmanager.details import job_details, vertex_details


def stored_job(root: str, job_id: str, submitted_s: float) -> JobStore:
    """A finished job's store, as a JobManager leaves it: log, graph blob, final status, logs."""
    graph = sums_job()
    submitted, records, _ = record(graph, SUMS_CONFIG, byte_model=sums_bytes)
    store = JobStore(root, job_id)
    store.create()
    key = store.blobs().put(cloudpickle.dumps(graph)).digest
    store.blobs().put(b"a shuffle descriptor the archive leaves behind")
    log = store.open_log(1 << 20)
    shift = int(submitted_s * 1000) - START_MS
    log.append(
        ev.JobSubmitted(submitted.name, key, submitted.config, submitted_s, 8, ()), START_MS + shift
    )
    for time_ms, event in records:
        log.append(event, time_ms + shift)
    log.close()
    store.write_final_status(
        job_details(
            job_id,
            JobStatus.FINISHED,
            name="sums",
            submitted_at=submitted_s,
            ended_at=submitted_s + 2.5,
            vertices=tuple(vertex_details(v, 2) for v in "abc"),
        )
    )
    store.write_log("jobmanager", b"job done\n")
    return store


@pytest.fixture
def config(tmp_path):
    return Configuration(
        {
            JOBSTORE_DIR.key: str(tmp_path / "jobs"),
            ARCHIVE_DIR.key: str(tmp_path / "history"),
        }
    )


def test_an_archive_reads_back_to_the_facts_its_store_gave_and_outlives_it(config, tmp_path):
    store = stored_job(config[JOBSTORE_DIR.key], "aaaa", 1000.0)
    live = job_facts(find_job("aaaa", config), "aaaa")
    archive = archive_job(store, config[ARCHIVE_DIR.key], -1)
    store.remove()
    found = find_job("aaaa", config)
    assert found.url == archive.url
    assert job_facts(found, "aaaa") == live
    assert found.logs() == {"jobmanager": b"job done\n"}
    blobs = [p for p in (tmp_path / "history" / "aaaa" / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == 1  # the graph only
    assert not (tmp_path / "history" / "aaaa" / "snapshots").exists()


def test_history_lists_newest_first_and_keeps_only_the_retained_jobs(config):
    for n, job_id in enumerate(["old", "mid", "new"]):
        store = stored_job(config[JOBSTORE_DIR.key], job_id, 1000.0 + 100 * n)
        archive_job(store, config[ARCHIVE_DIR.key], 2)
        store.remove()
    jobs = history(config)
    assert [(j.job_id, j.status, j.tasks) for j in jobs] == [
        ("new", JobStatus.FINISHED, 6),
        ("mid", JobStatus.FINISHED, 6),
    ]
    assert jobs[0].ended_at - jobs[0].submitted_at == 2.5
    with pytest.raises(UnknownJobError, match="no job 'old' in"):
        find_job("old", config)


def test_a_full_local_history_drops_its_oldest_written_archive_reading_only_that_one(
    config, monkeypatch
):
    """By when each archive was written, as Flink's HistoryServer orders them (here against
    the jobs' submission order), with one status read however many archives there are; a
    folder that is no archive is left."""
    history_dir = config[ARCHIVE_DIR.key]
    for n, job_id in enumerate(["first", "second", "third"]):
        store = stored_job(config[JOBSTORE_DIR.key], job_id, 1000.0 + 100 * n)
        archive_job(store, history_dir, -1)
        store.remove()
    os.makedirs(os.path.join(history_dir, "stray"))
    for job_id, written_s in [("stray", 1.0), ("second", 2.0), ("first", 3.0), ("third", 4.0)]:
        os.utime(os.path.join(history_dir, job_id), (written_s, written_s))
    reads = []
    final_status = JobStore.final_status

    def counted(store):
        reads.append(os.path.basename(store.path))
        return final_status(store)

    monkeypatch.setattr(JobStore, "final_status", counted)
    store = stored_job(config[JOBSTORE_DIR.key], "fourth", 1400.0)
    archive_job(store, history_dir, 3)
    assert sorted(os.listdir(history_dir)) == ["first", "fourth", "stray", "third"]
    assert reads == ["stray", "second"]


def test_a_job_with_a_store_and_no_archive_yet_is_listed_as_not_ended(config):
    store = stored_job(config[JOBSTORE_DIR.key], "live", 2000.0)
    store.fs.rm_file(f"{store.path}/{STATUS_FILE}")
    assert [(j.job_id, j.status, j.name) for j in history(config)] == [("live", None, "sums")]
