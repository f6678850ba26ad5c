"""``JobHandle.events()``: a job's events, decoded, oldest first, read from the event log its
JobManager names; a write under way at the log's end is left out and left alone. (On Ray,
``tests/jobmanager/runtime/test_jobs_on_ray.py`` replays a finished job from them.)"""

from __future__ import annotations

from jobmanager.client.client import JobHandle
from jobmanager.messages import events as ev
from jobmanager.runtime.eventlog import EventLog, segment_name
from jobmanager.runtime.jobstore import JobStore


class LogAtHandle(JobHandle):
    """A handle whose JobManager answers ``event_log`` with ``url`` (no Ray)."""

    def __init__(self, url: str) -> None:
        super().__init__("job-1", actor=None)
        self.url = url

    def event_log(self) -> str:
        return self.url


def write_log(url: str, *events) -> None:
    log = EventLog(url)
    for n, event in enumerate(events):
        log.append(event, time_ms=n)
    log.close()


def test_the_events_come_back_decoded_in_the_order_they_were_logged(tmp_path):
    url = str(tmp_path / "job-1" / "events")
    write_log(url, ev.TimerFired(0), ev.TimerFired(1))
    write_log(url, ev.TimerFired(2))  # a JobManager that took the job over: a segment of its own
    assert LogAtHandle(url).events() == [ev.TimerFired(0), ev.TimerFired(1), ev.TimerFired(2)]


def test_a_write_under_way_at_the_end_is_left_out_and_left_on_the_file(tmp_path):
    url = str(tmp_path / "job-1" / "events")
    write_log(url, ev.TimerFired(0), ev.TimerFired(1))
    segment = tmp_path / "job-1" / "events" / segment_name(0)
    with open(segment, "ab") as file:
        file.write(b"\x07\x00\x00")  # the first bytes of a record's header: the writer is at it
    written = segment.read_bytes()
    assert LogAtHandle(url).events() == [ev.TimerFired(0), ev.TimerFired(1)]
    assert segment.read_bytes() == written  # a reader never cuts what the JobManager writes
    # what the events replaced did: the store's reader, made for a JobManager taking over,
    # repairs the log (cuts the tail off) as it reads
    assert [event for _, event in JobStore(str(tmp_path), "job-1").records(0)] == [
        ev.TimerFired(0),
        ev.TimerFired(1),
    ]
    assert segment.read_bytes() == written[:-3]
