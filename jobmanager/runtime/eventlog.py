"""The job's event log: append-only segments of checksummed, compressed records.

Every event is appended here before the scheduling core applies it, and the log is flushed
before any command leaves the JobManager, so no deployment, cancellation or decision is ever
ahead of the log. A segment begins with its header: ``TIDALLOG``, the format version (little-
endian u32) and the CRC-32 of those 12 bytes. A record is a header (payload length, CRC-32 of
the payload, CRC-32 of those two) and the payload: ``(time_ms, event)``, msgpack-encoded
(``jobmanager.messages.codec``: fields by name) and LZ4-compressed. ``time_ms`` is when it was
logged.

The version is per segment because a log outlives its writer: a job taken over after an
upgrade has old segments and new ones, and ``tidal report`` reads archived logs of every age.
Format 1 is the first with a header; a segment without one is format 0 (messages by field
position, read through ``jobmanager.messages.positional``). A legacy segment cannot be taken
for a versioned one: its first four bytes would be a record gigabytes long. A segment of a
version newer than ``FORMAT_VERSION`` is refused with ``EventLogVersionError``, never guessed at.

The log is a directory of segments ``00000000.log``, ``00000001.log``, ... on a local disk or at
any fsspec URL. A JobManager writes its own segments, never one another wrote: on a local disk
it appends to one segment (a write per flush), elsewhere (object stores cannot append) each
flush is a new segment, written whole. A snapshot rolls to a new segment, so recovery reads
the snapshot and the segments after it.

Reading stops quietly at a torn last record of the last segment (the process died mid-write:
those events were never acted on) and, when asked to repair, cuts it off so the segment is
whole again. A bad record anywhere else raises ``EventLogCorrupted``, naming the segment, the
record and its offset: the store itself broke, and the job cannot be recovered from it.
"""

from __future__ import annotations

import struct
import threading
import time
import zlib
from collections.abc import Generator, Iterator

import fsspec
import lz4.frame
from fsspec.implementations.local import LocalFileSystem

from jobmanager.errors import EventLogCorrupted, EventLogVersionError, JobStoreError
from jobmanager.messages.codec import decode, encode

__all__ = [
    "FORMAT_VERSION",
    "EventLog",
    "EventLogCorrupted",
    "EventLogVersionError",
    "JobStoreError",
    "read_events",
    "read_log",
    "segments",
]

FORMAT_VERSION = 1
_MAGIC = b"TIDALLOG"
_U32 = struct.Struct("<I")
_SEGMENT_HEADER = _MAGIC + _U32.pack(FORMAT_VERSION)
_SEGMENT_HEADER += _U32.pack(zlib.crc32(_SEGMENT_HEADER))
_HEADER = struct.Struct("<III")
_LENGTH_AND_CHECKSUM = struct.Struct("<II")
_SUFFIX = ".log"


def encode_record(event: object, time_ms: int) -> bytes:
    payload = lz4.frame.compress(encode((time_ms, event)))
    described = _LENGTH_AND_CHECKSUM.pack(len(payload), zlib.crc32(payload))
    return described + struct.pack("<I", zlib.crc32(described)) + payload


def segment_name(number: int) -> str:
    return f"{number:08d}{_SUFFIX}"


def segments(fs, path: str) -> list[int]:
    """The segment numbers under ``path``, in order."""
    try:
        names = [entry.rsplit("/", 1)[-1] for entry in fs.ls(path, detail=False)]
    except FileNotFoundError:
        return []
    return sorted(
        int(n[: -len(_SUFFIX)]) for n in names if n.endswith(_SUFFIX) and n[:-4].isdigit()
    )


class EventLog:
    """Appends events under ``url`` (a directory: a path or fsspec URL); thread-safe.
    ``flush_bytes``: buffered records are written once they reach this size (and whenever
    ``flush`` is called)."""

    def __init__(self, url: str, flush_bytes: int = 1 << 20) -> None:
        self.url = url.rstrip("/")
        self.flush_bytes = flush_bytes
        self._fs, self._path = fsspec.core.url_to_fs(self.url)
        self._fs.makedirs(self._path, exist_ok=True)
        existing = segments(self._fs, self._path)
        self.segment = existing[-1] + 1 if existing else 0
        self._appends = isinstance(self._fs, LocalFileSystem)
        self._handle = None
        self._headed = False  # the current segment has its header
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._lock = threading.Lock()
        self.appended = 0
        self.size = (
            int(self._fs.du(self._path)) if existing else 0
        )  # bytes in the log, all writers'

    def append(self, event: object, time_ms: int | None = None) -> None:
        record = encode_record(event, time.time_ns() // 1_000_000 if time_ms is None else time_ms)
        with self._lock:
            self._buffer.append(record)
            self._buffered += len(record)
            self.appended += 1
            full = self._buffered >= self.flush_bytes
        if full:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            if not self._buffer:
                return
            data = b"".join(self._buffer)
            self._buffer.clear()
            self._buffered = 0
            if not self._headed:
                data = _SEGMENT_HEADER + data
            self.size += len(data)
            path = f"{self._path}/{segment_name(self.segment)}"
            if self._appends:
                if self._handle is None:
                    self._handle = self._fs.open(path, "ab")
                self._handle.write(data)
                self._handle.flush()
                self._headed = True
            else:
                self._fs.pipe_file(path, data)
                self.segment += 1

    def roll(self) -> int:
        """Write what is buffered and start a new segment; return its number."""
        self.flush()
        with self._lock:
            if self._close_segment_file():
                self.segment += 1
                self._headed = False
            return self.segment

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._close_segment_file()

    def _close_segment_file(self) -> bool:
        """Close the open segment file (the lock held); whether one was open."""
        if self._handle is None:
            return False
        self._handle.close()
        self._handle = None
        return True


def read_log(
    url: str, first_segment: int = 0, repair: bool = False
) -> Iterator[tuple[int, object]]:
    """``(time_ms, event)`` for every record from ``first_segment`` on. ``repair``: cut a torn
    tail off the last segment, so a new writer's segments follow a whole one."""
    fs, path = fsspec.core.url_to_fs(url.rstrip("/"))
    numbers = [n for n in segments(fs, path) if n >= first_segment]
    for position, number in enumerate(numbers):
        name = f"{path}/{segment_name(number)}"
        data = fs.cat_file(name)
        torn = yield from _records(data, url, number)
        if torn is None:
            continue
        offset, what = torn
        if position < len(numbers) - 1:
            raise EventLogCorrupted(
                f"event log {url}: segment {segment_name(number)} ends in the "
                f"middle of {what}, and later segments follow it"
            )
        if repair:
            fs.pipe_file(name, data[:offset])
        return


_Records = Generator[tuple[int, object], None, tuple[int, str] | None]  # returns a torn write


def _records(data: bytes, url: str, segment: int) -> _Records:
    """Yield the segment's whole records; return where a write cut short by a crash begins and
    what it cut, if one does."""
    offset = _records_start(data, url, segment)
    if offset is None:
        return 0, "its header"
    record = 0
    while offset < len(data):
        end = _record_end(data, offset, url, segment, record)
        if end is None:
            return offset, f"record {record} at byte {offset}"
        checksum = _HEADER.unpack_from(data, offset)[1]
        payload = data[offset + _HEADER.size : end]
        if zlib.crc32(payload) != checksum:
            raise EventLogCorrupted(
                f"event log {url}: segment {segment_name(segment)}, record {record} at byte "
                f"{offset} is corrupt (checksum mismatch)"
            )
        time_ms, event = decode(lz4.frame.decompress(payload))
        yield time_ms, event
        offset, record = end, record + 1
    return None


def _records_start(data: bytes, url: str, segment: int) -> int | None:
    """Where the segment's first record begins: after its header, or at 0 in a segment of
    format 0, which has none; None if the header is torn (cut short by a crash). A version
    this Tidal does not know is refused."""
    if not data or data[: len(_MAGIC)] != _MAGIC[: len(data)]:
        return 0  # format 0
    if len(data) < len(_SEGMENT_HEADER):
        return None
    (version,) = _U32.unpack_from(data, len(_MAGIC))
    (checksum,) = _U32.unpack_from(data, len(_MAGIC) + _U32.size)
    if zlib.crc32(data[: len(_MAGIC) + _U32.size]) != checksum:
        raise EventLogCorrupted(
            f"event log {url}: segment {segment_name(segment)} has a corrupt header"
        )
    if version > FORMAT_VERSION:
        raise EventLogVersionError(
            f"event log {url}: segment {segment_name(segment)} is in event-log format {version}, "
            f"written by a newer Tidal; this Tidal reads formats 0 to {FORMAT_VERSION}: read it "
            "with the Tidal that wrote it, or a later one"
        )
    return len(_SEGMENT_HEADER)


def _record_end(data: bytes, offset: int, url: str, segment: int, record: int) -> int | None:
    """Where the record at ``offset`` ends; None if it is torn (cut short by a crash). A whole
    header carries its own checksum, so a corrupt length is told from a torn write."""
    if offset + _HEADER.size > len(data):
        return None
    length, _, header_checksum = _HEADER.unpack_from(data, offset)
    if zlib.crc32(data[offset : offset + _LENGTH_AND_CHECKSUM.size]) != header_checksum:
        raise EventLogCorrupted(
            f"event log {url}: segment {segment_name(segment)}, record {record} at byte {offset} "
            "has a corrupt header"
        )
    end = offset + _HEADER.size + length
    return end if end <= len(data) else None


def read_events(url: str) -> Iterator[object]:
    for _, event in read_log(url):
        yield event
