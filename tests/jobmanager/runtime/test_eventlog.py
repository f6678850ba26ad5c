"""The event log and the job store: what a new JobManager reads back, and every way it can be
broken, each a clean recovery or an error naming the store."""

import pytest

from jobmanager.core.replay import new_state, replay
from jobmanager.core.state import JobManagerState
from jobmanager.errors import EventLogCorrupted, JobStoreError
from jobmanager.messages import events as ev
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.runtime.eventlog import EventLog, read_events, read_log
from jobmanager.runtime.jobstore import JobStore, StoredSnapshot
from jobmanager.simulation.cluster import SimulatedRun, SimulatedTaskManagers

HEADER = 16  # a segment's header: TIDALLOG, the format version, their CRC-32


def job():
    g = JobGraph("logged")
    g.connect(g.add_vertex("a", 3), g.add_vertex("b"), Partitioner.hash("k"))
    return g


def logged_run(log: EventLog) -> JobManagerState:
    state = JobManagerState(job(), job_id="logged")
    original = state.handle

    def logged(event):
        """As the JobManager does: the event, then the decisions its step made."""
        log.append(event)
        step = original(event)
        for decided in step.events:
            log.append(decided)
        return step

    state.handle = logged
    assert SimulatedRun(state, SimulatedTaskManagers(state.graph)).run().status == "FINISHED"
    log.close()
    return state


@pytest.mark.parametrize("scheme", ["file", "memory"])
def test_a_finished_jobs_log_replays_into_the_same_state(tmp_path, scheme):
    url = str(tmp_path / "events") if scheme == "file" else "memory://tidal-test/events"
    log = EventLog(url, flush_bytes=256)
    state = logged_run(log)
    replayed = JobManagerState(job(), job_id="logged")
    for event in read_events(url):
        replayed.apply(event)
    assert replayed.describe() == state.describe()
    assert log.appended == sum(1 for _ in read_events(url))


def test_each_writer_writes_its_own_segments_and_a_reader_reads_them_in_order(tmp_path):
    url = str(tmp_path / "events")
    first = EventLog(url)
    first.append(ev.TimerFired(0), time_ms=5)
    first.close()
    second = EventLog(url)  # a JobManager that took the job over
    second.append(ev.TimerFired(1), time_ms=7)
    second.flush()
    assert sorted(p.name for p in (tmp_path / "events").iterdir()) == [
        "00000000.log",
        "00000001.log",
    ]
    assert list(read_log(url)) == [(5, ev.TimerFired(0)), (7, ev.TimerFired(1))]
    assert list(read_log(url, first_segment=1)) == [(7, ev.TimerFired(1))]


def write_tokens(url, count=3) -> bytes:
    log = EventLog(url)
    for token in range(count):
        log.append(ev.TimerFired(token))
    log.close()


def test_a_torn_tail_is_cut_off_and_the_log_goes_on_after_it(tmp_path):
    url = str(tmp_path / "events")
    write_tokens(url)
    segment = tmp_path / "events" / "00000000.log"
    segment.write_bytes(segment.read_bytes()[:-3])  # the JobManager died mid-write
    assert [e.token for _, e in read_log(url, repair=True)] == [0, 1]
    log = EventLog(url)
    log.append(ev.TimerFired(9))
    log.flush()
    assert [e.token for e in read_events(url)] == [0, 1, 9]


def test_a_corrupt_record_in_the_middle_is_an_error_naming_the_store(tmp_path):
    url = str(tmp_path / "events")
    write_tokens(url)
    segment = tmp_path / "events" / "00000000.log"
    broken = bytearray(segment.read_bytes())
    broken[HEADER + 20] ^= 0xFF  # inside the first record's payload
    segment.write_bytes(bytes(broken))
    with pytest.raises(EventLogCorrupted, match=f"{url}.*00000000.log, record 0 .*checksum"):
        list(read_log(url))


def test_a_corrupt_length_is_not_mistaken_for_a_torn_tail(tmp_path):
    url = str(tmp_path / "events")
    write_tokens(url)
    segment = tmp_path / "events" / "00000000.log"
    broken = bytearray(segment.read_bytes())
    broken[HEADER] ^= 0x40  # the first record's length: it would seem to run past the end
    segment.write_bytes(bytes(broken))
    with pytest.raises(EventLogCorrupted, match=f"record 0 at byte {HEADER} has a corrupt header"):
        list(read_log(url, repair=True))
    assert segment.read_bytes() == bytes(broken), "a corrupt log must not be cut"


def test_a_torn_segment_followed_by_another_is_corruption(tmp_path):
    url = str(tmp_path / "events")
    write_tokens(url)
    write_tokens(url)
    first = tmp_path / "events" / "00000000.log"
    first.write_bytes(first.read_bytes()[:-2])
    with pytest.raises(EventLogCorrupted, match="ends in the middle of record 2"):
        list(read_log(url))


def test_a_store_keeps_the_submission_the_events_and_the_latest_snapshot(tmp_path):
    store = JobStore(str(tmp_path), "job1")
    assert not store.exists()
    store.create()
    submitted = ev.JobSubmitted("logged", "", (), 1.5, 2, ())
    log = store.open_log(1 << 20)
    log.append(submitted)
    state = new_state(job(), submitted, "job1")
    for event in (ev.JobStarted(), ev.TaskManagerRegistered("tm", 2)):
        log.append(event)
        state.handle(event)
    from jobmanager.core import snapshot as snapshots

    segment = log.roll()
    store.write_snapshot(StoredSnapshot(segment, snapshots.take(state), ()))
    log.append(ev.JobCancelRequested("enough"))
    log.close()
    assert store.exists() and store.submitted() == submitted
    latest = store.latest_snapshot()
    assert latest.next_segment == 1
    restored = new_state(job(), submitted, "job1", latest.state)
    replay(restored, (e for _, e in store.records(latest.next_segment)))
    state.handle(ev.JobCancelRequested("enough"))
    assert restored.describe() == state.describe()
    store.remove()
    assert not (tmp_path / "job1").exists()


def test_a_missing_store_and_an_unreachable_one_are_errors_naming_them(tmp_path):
    missing = JobStore(str(tmp_path), "gone")
    assert not missing.exists()
    with pytest.raises(JobStoreError, match=f"job store {tmp_path}/gone"):
        missing.submitted()
    with pytest.raises(JobStoreError, match="job store ftp://127.0.0.1:9/tidal/job1: cannot reach"):
        JobStore("ftp://127.0.0.1:9/tidal", "job1")  # nothing listens on port 9
    with pytest.raises(JobStoreError, match="nosuchscheme"):
        JobStore("nosuchscheme://bucket/tidal", "job1")
