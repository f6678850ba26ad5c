"""A job's JobManager leaves once the job ended; the job stays readable from its store (status,
listing, how its graph stands, logs) until it is released or its retention ends, when its
store and work directory go."""

from __future__ import annotations

import os
import time

import pytest

from jobmanager import Client
from jobmanager.messages import events as ev
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import ARCHIVE_DIR, JOBSTORE_EXPIRATION_TIME, Configuration
from jobmanager.runtime.actor import work_directory
from jobmanager.runtime.jobrecords import job_record
from jobmanager.runtime.jobstore import JobStore
from tests.jobmanager.runtime.jobs import FAST, sum_job

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def wait_for(condition, deadline_s: float, what: str):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {deadline_s} s: {what}")


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_an_ended_job_holds_no_process_and_is_read_from_its_store(client, tmp_path):
    handle = client.submit(sum_job(str(tmp_path / "out")), config=FAST)
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    pid = handle.status().pid
    wait_for(lambda: process_gone(pid), 60, f"the JobManager process {pid} gone")

    again = client.job(handle.job_id)  # a new handle, as `tidal status` in a new process has
    status = again.status()
    assert status.status is JobStatus.FINISHED and status.ended_at >= status.submitted_at
    assert {v.name for v in status.vertices} == {"numbers", "sum -> sink"}  # chained
    listed = {job.job_id: job for job in client.list()}[handle.job_id]
    assert listed == status.summary()
    assert again.describe()[-1] == handle.describe()[-1]  # decisions, replayed from the log
    again.cancel()  # nothing to cancel: not an error
    logs = wait_for(lambda: (lambda l: len(l) > 1 and l)(again.logs()), 30, "TaskManager logs")
    assert "job manager ready" in logs["jobmanager"].decode()
    task_managers = [text.decode() for name, text in logs.items() if name != "jobmanager"]
    assert any("ran tasks of: " in text and "numbers" in text for text in task_managers)

    work_dir = work_directory(Configuration(), handle.job_id)
    store = job_record(handle.job_id).taken.store
    assert os.path.isdir(store)
    again.release()
    assert not os.path.exists(store) and not os.path.exists(work_dir)
    with pytest.raises(LookupError):
        client.job(handle.job_id)


def test_an_ended_job_is_removed_when_its_retention_ends(client, tmp_path):
    config = {**FAST, JOBSTORE_EXPIRATION_TIME.key: "1 s"}
    handle = client.submit(sum_job(str(tmp_path / "out")), config=config)
    assert handle.wait(timeout=120).status == "FINISHED"
    store = job_record(handle.job_id).taken.store
    work_dir = work_directory(Configuration(), handle.job_id)
    assert os.path.isdir(store) and os.path.isdir(work_dir)
    wait_for(lambda: job_record(handle.job_id) is None, 30, "the ended job forgotten")
    assert not os.path.exists(store) and not os.path.exists(work_dir)
    assert (tmp_path / "out").is_dir()  # what the job published stays


def logged_events(store_url: str) -> list:
    return [event for _, event in JobStore(*store_url.rstrip("/").rsplit("/", 1)).records(0)]


def test_the_archive_outcome_comes_back_as_an_event_and_a_failed_archive_leaves_the_end(
    client, tmp_path
):
    history = tmp_path / "history"
    config = {**FAST, ARCHIVE_DIR.key: str(history)}
    handle = client.submit(sum_job(str(tmp_path / "out")), config=config)
    assert handle.wait(timeout=120).status is JobStatus.FINISHED
    events = logged_events(job_record(handle.job_id).taken.store)
    archived = events[-1]
    assert type(archived) is ev.JobArchived and type(events[-2]) is ev.JobEnded, events[-3:]
    assert archived.error == "" and archived.archive.endswith(handle.job_id)
    assert (history / handle.job_id).is_dir()

    (tmp_path / "a-file").write_text("not a directory")
    config = {**FAST, ARCHIVE_DIR.key: str(tmp_path / "a-file" / "history")}
    handle = client.submit(sum_job(str(tmp_path / "out2")), config=config)
    result = handle.wait(timeout=120)
    assert result.status is JobStatus.FINISHED, result.cause
    archived = logged_events(job_record(handle.job_id).taken.store)[-1]
    assert type(archived) is ev.JobArchived and archived.archive == ""
    assert "a-file" in archived.error, archived.error
    assert (tmp_path / "out2").is_dir()


def test_a_client_sees_the_end_only_once_the_jobs_record_holds_it(client, tmp_path):
    """Until its end is stored, archived and recorded a job is FINISHING: a client that sees
    it ended (and releases it, or lists it) finds the end in the job's record."""
    handle = client.submit(sum_job(str(tmp_path / "out")), config=FAST)
    while not (status := handle.status()).status.is_terminal:
        pass
    assert status.status is JobStatus.FINISHED, status.cause
    assert job_record(handle.job_id).end is not None
    handle.release()
