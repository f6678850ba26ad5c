"""The event log's format versions: a segment says its version in its header; a log of format 0
(no header, messages by field position) still reads, also followed by segments of today's
format (a job taken over after an upgrade); a newer version is refused by name; messages read
by field name, so a field added with a default reads old records and a removed one is dropped."""

from __future__ import annotations

import struct
import zlib
from dataclasses import field

import lz4.frame
import msgpack
import pytest

from jobmanager.errors import EventLogCorrupted, EventLogVersionError, JobStoreError
from jobmanager.messages import codec
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode, message
from jobmanager.runtime.eventlog import FORMAT_VERSION, EventLog, read_log
from jobmanager.runtime.jobstore import JobStore

_U32 = struct.Struct("<I")


def segment_header(version: int) -> bytes:
    """As the module docstring of ``eventlog`` draws it, written here again on purpose."""
    described = b"TIDALLOG" + _U32.pack(version)
    return described + _U32.pack(zlib.crc32(described))


def record(payload: bytes) -> bytes:
    """A record as every format writes it, around an already encoded ``(time_ms, event)``."""
    payload = lz4.frame.compress(payload)
    described = struct.pack("<II", len(payload), zlib.crc32(payload))
    return described + _U32.pack(zlib.crc32(described)) + payload


def positional(name: str, *values) -> msgpack.ExtType:
    """A message as format 0 encoded it: ``[name, *values]`` in extension 1."""
    return msgpack.ExtType(1, msgpack.packb([name, *values]))


def named(name: str, **values) -> msgpack.ExtType:
    return msgpack.ExtType(2, msgpack.packb([name, values]))


def test_every_segment_begins_with_todays_version(tmp_path):
    url = str(tmp_path / "events")
    log = EventLog(url)
    log.append(ev.TimerFired(0), time_ms=5)
    log.roll()
    log.append(ev.TimerFired(1), time_ms=6)
    log.close()
    for segment in sorted((tmp_path / "events").iterdir()):
        assert segment.read_bytes().startswith(segment_header(FORMAT_VERSION)), segment.name
    assert list(read_log(url)) == [(5, ev.TimerFired(0)), (6, ev.TimerFired(1))]


def test_each_flush_to_an_object_store_is_a_segment_with_its_header():
    url = "memory://tidal-test-versions/events"
    log = EventLog(url)
    for token in range(2):
        log.append(ev.TimerFired(token), time_ms=token)
        log.flush()
    assert log.segment == 2
    assert list(read_log(url)) == [(0, ev.TimerFired(0)), (1, ev.TimerFired(1))]


def test_a_format_0_log_followed_by_todays_segments_reads_whole(tmp_path):
    """A job taken over after an upgrade: the old JobManager's segment has no header and its
    messages go by position; the new one's come after it."""
    events = tmp_path / "events"
    events.mkdir()
    old = [
        (1, positional("TaskRunning", "a", 0, 0, 11)),
        (2, positional("TaskFailed", "a", 0, 0, "boom", 12)),
    ]
    (events / "00000000.log").write_bytes(b"".join(record(msgpack.packb(r)) for r in old))
    log = EventLog(str(events))
    log.append(ev.TimerFired(3, 13), time_ms=3)
    log.close()
    assert list(read_log(str(events))) == [
        (1, ev.TaskRunning("a", 0, 0, 11)),
        (2, ev.TaskFailed("a", 0, 0, "boom", 12)),  # written before its last two fields were
        (3, ev.TimerFired(3, 13)),
    ]


def test_a_newer_format_is_refused_naming_both_versions(tmp_path):
    events = tmp_path / "job" / "events"
    events.mkdir(parents=True)
    newer = FORMAT_VERSION + 1
    (events / "00000000.log").write_bytes(
        segment_header(newer) + record(msgpack.packb((1, named("JobStarted"))))
    )
    expected = (
        f"00000000.log is in event-log format {newer}, written by a newer Tidal; "
        f"this Tidal reads formats 0 to {FORMAT_VERSION}"
    )
    with pytest.raises(EventLogVersionError, match=expected):
        list(read_log(str(events)))
    with pytest.raises(JobStoreError, match=expected):  # what recovery and `tidal report` meet
        JobStore(str(tmp_path), "job").records(0)


def test_a_corrupt_segment_header_is_not_taken_for_a_version(tmp_path):
    events = tmp_path / "events"
    events.mkdir()
    header = bytearray(segment_header(FORMAT_VERSION))
    header[9] ^= 0x01  # the version
    (events / "00000000.log").write_bytes(bytes(header))
    with pytest.raises(EventLogCorrupted, match="00000000.log has a corrupt header"):
        list(read_log(str(events)))


@pytest.mark.parametrize("kept", [0, 5, 15])
def test_a_torn_segment_header_is_a_torn_tail(tmp_path, kept):
    url = str(tmp_path / "events")
    log = EventLog(url)
    log.append(ev.TimerFired(0), time_ms=1)
    log.close()
    first = tmp_path / "events" / "00000001.log"
    first.write_bytes(segment_header(FORMAT_VERSION)[:kept])  # its writer died at once
    assert list(read_log(url, repair=True)) == [(1, ev.TimerFired(0))]
    assert first.read_bytes() == b""
    if kept:  # and not the last segment: not a crash, the store broke
        first.write_bytes(segment_header(FORMAT_VERSION)[:kept])
        (tmp_path / "events" / "00000002.log").write_bytes(segment_header(FORMAT_VERSION))
        with pytest.raises(EventLogCorrupted, match="01.log ends in the middle of its header"):
            list(read_log(url))


@message
class Grown:
    """A message as a later Tidal has it: ``added`` came after records were written without
    it, between two older fields."""

    kept: int
    added: tuple = field(default=())
    last: str = ""


def test_a_field_added_with_a_default_reads_records_written_without_it(monkeypatch):
    monkeypatch.setitem(codec.V0_FIELDS, "Grown", ("kept", "last"))  # as format 0 wrote it
    assert decode(msgpack.packb(positional("Grown", 7, "x"))) == Grown(7, (), "x")
    assert decode(msgpack.packb(named("Grown", kept=7, last="x"))) == Grown(7, (), "x")


def test_a_removed_field_is_dropped_on_read(monkeypatch):
    monkeypatch.setitem(codec.V0_FIELDS, "Grown", ("kept", "gone", "last"))
    assert decode(msgpack.packb(positional("Grown", 7, 99, "x"))) == Grown(7, (), "x")
    assert decode(msgpack.packb(named("Grown", kept=7, gone=99, last="x"))) == Grown(7, (), "x")


def test_a_field_added_without_a_default_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'Grown' was written without kept, which have no default"):
        decode(msgpack.packb(named("Grown", last="x")))


def test_more_positional_values_than_format_0_knew_are_refused_not_misread():
    with pytest.raises(ValueError, match="'TimerFired' written by position holds 3 values"):
        decode(msgpack.packb(positional("TimerFired", 1, 2, 3)))


def test_todays_messages_go_by_name_and_nest():
    finished = ev.TaskFinished("a", 1, 0, (ev.ProducedPartition("a->b", (1, 2)),))
    payload = msgpack.unpackb(encode(finished), raw=False)
    assert payload.code == 2
    name, values = msgpack.unpackb(payload.data, raw=False)
    assert name == "TaskFinished" and set(values) == {
        "vertex",
        "subtask",
        "attempt",
        "produced",
        "metrics",
    }
    assert decode(encode(finished)) == finished
