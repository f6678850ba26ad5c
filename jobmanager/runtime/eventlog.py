"""The job's event log: append-only, checksummed, compressed, flushed in batches.

Every event is appended here before the scheduling core applies it, so replaying the log into a
fresh state rebuilds the same execution graph. A record is a little header (payload length and
CRC-32 of the payload) followed by the payload: the event, msgpack-encoded and LZ4-compressed.
Records are buffered and written in batches (Flink's job event store does the same: a buffer
flushed by size or every second), to a local directory by default or at any fsspec URL whose
file system can append.

Reading stops quietly at a torn last record (the process died mid-write: those events were
never acknowledged) and raises ``EventLogCorrupted`` for a bad record in the middle, which would
mean the store itself broke.
"""

from __future__ import annotations

import struct
import threading
import zlib
from typing import Iterator

import fsspec
import lz4.frame

from jobmanager.errors import TidalError
from jobmanager.messages.codec import decode, encode

__all__ = ["EventLog", "EventLogCorrupted", "read_events"]

_HEADER = struct.Struct("<II")


class EventLogCorrupted(TidalError):
    pass


def encode_record(event: object) -> bytes:
    payload = lz4.frame.compress(encode(event))
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


class EventLog:
    """Appends events to ``url`` (a file path or fsspec URL); thread-safe."""

    def __init__(self, url: str, flush_bytes: int = 1 << 20) -> None:
        self.url = url
        self.flush_bytes = flush_bytes
        self._fs, self._path = fsspec.core.url_to_fs(url)
        parent = self._path.rsplit("/", 1)[0]
        if parent and parent != self._path:
            self._fs.makedirs(parent, exist_ok=True)
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._lock = threading.Lock()
        self.appended = 0

    def append(self, event: object) -> None:
        record = encode_record(event)
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
            with self._fs.open(self._path, "ab") as handle:
                handle.write(data)


def read_events(url: str) -> Iterator[object]:
    fs, path = fsspec.core.url_to_fs(url)
    with fs.open(path, "rb") as handle:
        data = handle.read()
    offset, number = 0, 0
    while offset < len(data):
        if offset + _HEADER.size > len(data):
            return  # torn header at the tail
        length, checksum = _HEADER.unpack_from(data, offset)
        start, end = offset + _HEADER.size, offset + _HEADER.size + length
        if end > len(data):
            return  # torn payload at the tail
        payload = data[start:end]
        if zlib.crc32(payload) != checksum:
            raise EventLogCorrupted(f"event log {url}: record {number} at byte {offset} is corrupt")
        yield decode(lz4.frame.decompress(payload))
        offset, number = end, number + 1
