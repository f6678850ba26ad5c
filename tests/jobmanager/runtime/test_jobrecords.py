"""Job records: one schema, one writer per part, no read-then-write. Against an in-memory
key-value store with the GCS's put-if-absent, so the interleavings that lost a job's end
(the ResourceManager rewriting a record it read before the JobManager added the end) are
played out exactly."""

from __future__ import annotations

import pytest

from jobmanager.errors import TidalError
from jobmanager.messages.codec import encode
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime import jobrecords as records
from jobmanager.runtime.details import JobSummary


class DictStore:
    """The GCS's key-value store as a dict: ``put_new`` stores only an absent key."""

    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}

    def put_new(self, key: str, value: bytes) -> bool:
        return self.values.setdefault(key, value) is value

    def get(self, key: str) -> bytes | None:
        return self.values.get(key)

    def keys(self, prefix: str) -> list[str]:
        return [key for key in self.values if key.startswith(prefix)]

    def delete_prefix(self, prefix: str) -> None:
        for key in self.keys(prefix):
            del self.values[key]


SUMMARY = JobSummary("j1", "sums", JobStatus.FINISHED, 10.0, 12.5, 3)


@pytest.fixture
def kv() -> DictStore:
    return DictStore()


def test_a_record_reads_back_as_its_schema(kv):
    assert records.record_job("j1", "/jobs/j1", True, "/tmp/tidal/j1", kv=kv)
    record = records.job_record("j1", kv=kv)
    assert record == records.JobRecord(
        "j1", records.JobTaken("/jobs/j1", True, "/tmp/tidal/j1"), None, False
    )
    assert record.store_root == "/jobs"
    assert records.record_end("j1", SUMMARY, 99.0, kv=kv)
    assert records.job_record("j1", kv=kv).end == records.JobEnd(SUMMARY, 99.0)
    assert records.job_records(kv=kv) == {"j1": records.job_record("j1", kv=kv)}


def test_a_cleanup_marked_after_a_stale_read_keeps_the_end_written_meanwhile(kv):
    records.record_job("j1", "/jobs/j1", False, kv=kv)
    seen = records.job_records(kv=kv)["j1"]  # the ResourceManager reads: no end, JM gone?
    records.record_end("j1", SUMMARY, 99.0, kv=kv)  # the JobManager ends the job meanwhile
    records.mark_cleaned(seen.job_id, kv=kv)  # the ResourceManager acts on what it read
    record = records.job_record("j1", kv=kv)
    assert record.cleaned and record.end == records.JobEnd(SUMMARY, 99.0)


def test_each_part_is_written_once_and_the_first_write_stands(kv):
    assert records.record_job("j1", "/jobs/j1", True, kv=kv)
    assert not records.record_job("j1", "/elsewhere/j1", False, kv=kv)  # a restarted JM
    assert records.record_end("j1", SUMMARY, 99.0, kv=kv)
    assert not records.record_end("j1", SUMMARY, 5.0, kv=kv)
    record = records.job_record("j1", kv=kv)
    assert record.taken.store == "/jobs/j1" and record.end.expires_at == 99.0


def test_forgetting_a_job_removes_every_part_and_no_other_jobs(kv):
    for job_id in ("j1", "j10"):
        records.record_job(job_id, f"/jobs/{job_id}", True, kv=kv)
        records.mark_cleaned(job_id, kv=kv)
    records.forget_job("j1", kv=kv)
    assert records.job_record("j1", kv=kv) is None
    assert set(records.job_records(kv=kv)) == {"j10"}


def test_a_record_of_another_version_is_refused_naming_both(kv):
    kv.put_new("job/j1/taken", encode((records.RECORD_VERSION + 1, "from the future")))
    with pytest.raises(
        TidalError,
        match=f"version {records.RECORD_VERSION + 1}; this Tidal "
        f"reads version {records.RECORD_VERSION}",
    ):
        records.job_record("j1", kv=kv)
