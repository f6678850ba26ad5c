"""PartitionServer: the side of a TaskManager that serves its partitions to other nodes.

A consumer on another node asks for one subpartition range of one partition, chunk by chunk:
``read_chunk(partition_id, subpartitions, offset, max_bytes)`` returns at most
``min(max_bytes, max_chunk_bytes)`` bytes of the *framed range* -- a range header (the range's
index entries and the schema, see :mod:`shuffle.partition_file`) followed by the range's bytes,
which are one contiguous piece of the file. No message is larger than the chunk bound however
large the range. The server keeps no per-consumer state, so a retried or reordered chunk request
is harmless, and it does not verify checksums: the consumer does, end to end.

The API is plain Python; the TaskManager's Ray actor exposes ``read_chunk`` as a remote method.
Files are looked up by partition id through the shuffle directory, never by a path a remote
caller names. Indexes are cached, keyed by the file's identity (inode, mtime, size), so a
partition rewritten by a rerun of its producer is never served from a stale index.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from shuffle.errors import PartitionFileTruncated, PartitionNotFound
from shuffle.ids import PartitionId
from shuffle.partition_file import PartitionIndex, encode_range_header
from shuffle.ranges import IndexRange
from shuffle.reader import read_index

__all__ = ["DEFAULT_CHUNK_BYTES", "PartitionLocator", "PartitionServer"]

DEFAULT_CHUNK_BYTES = 4 << 20


class PartitionLocator(Protocol):
    def path_for(self, partition_id: PartitionId) -> Path: ...


class PartitionServer:
    """Serves ranges of the partitions that ``locator`` (a ShuffleDirectory) holds. Thread-safe."""

    def __init__(
        self,
        locator: PartitionLocator,
        *,
        max_chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        cached_indexes: int = 1024,
    ) -> None:
        if max_chunk_bytes < 1:
            raise ValueError(f"max_chunk_bytes must be positive, not {max_chunk_bytes}")
        self.max_chunk_bytes = max_chunk_bytes
        self._locator = locator
        self._cached_indexes = cached_indexes
        self._indexes: OrderedDict[PartitionId, tuple[tuple[int, int, int], PartitionIndex]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def read_chunk(
        self, partition_id: PartitionId, subpartitions: IndexRange, offset: int, max_bytes: int
    ) -> bytes:
        """Bytes ``[offset, offset + min(max_bytes, max_chunk_bytes))`` of the framed range;
        fewer only at its end, and ``b""`` from its end on."""
        if offset < 0 or max_bytes < 1:
            raise ValueError(f"bad chunk request: offset {offset}, max_bytes {max_bytes}")
        path = str(self._locator.path_for(partition_id))
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError as error:
            raise PartitionNotFound(partition_id, path) from error
        try:
            index = self._index(partition_id, path, fd)
            if subpartitions.end >= index.num_subpartitions:
                raise IndexError(
                    f"subpartitions {subpartitions} outside partition {partition_id} "
                    f"of {index.num_subpartitions}"
                )
            layout = index.range_layout(subpartitions)
            header = encode_range_header(layout)
            end = min(len(header) + layout.data_size, offset + min(max_bytes, self.max_chunk_bytes))
            if offset >= end:
                return b""
            head = header[offset:end]
            data_start = max(offset - len(header), 0)
            data_end = end - len(header)
            if data_end <= data_start:
                return head
            body = _pread_exactly(
                fd, layout.file_offset + data_start, data_end - data_start, partition_id, path
            )
            return head + body if head else body
        finally:
            os.close(fd)

    def forget(self, partition_ids: Iterable[PartitionId]) -> None:
        """Drop cached indexes, e.g. when the partitions are released."""
        with self._lock:
            for partition_id in partition_ids:
                self._indexes.pop(partition_id, None)

    def _index(self, partition_id: PartitionId, path: str, fd: int) -> PartitionIndex:
        status = os.fstat(fd)
        identity = (status.st_ino, status.st_mtime_ns, status.st_size)
        with self._lock:
            cached = self._indexes.get(partition_id)
            if cached is not None and cached[0] == identity:
                self._indexes.move_to_end(partition_id)
                return cached[1]
        index = read_index(
            status.st_size,
            lambda offset, size: _pread_exactly(fd, offset, size, partition_id, path),
            partition_id,
            path,
        )
        with self._lock:
            self._indexes[partition_id] = (identity, index)
            self._indexes.move_to_end(partition_id)
            while len(self._indexes) > self._cached_indexes:
                self._indexes.popitem(last=False)
        return index


def _pread_exactly(fd: int, offset: int, size: int, partition_id: PartitionId, path: str) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise PartitionFileTruncated(
            partition_id, path, f"read {len(data)} of {size} bytes at {offset}"
        )
    return data
