"""Fetching a subpartition range from another node's PartitionServer, chunk by chunk.

The transport is one callable, ``fetch_chunk(descriptor, subpartitions, offset, max_bytes)``,
which the TaskManager implements as a call to the producing TaskManager's actor (it knows the
actor from ``descriptor.task_manager_id``) and tests implement by calling a PartitionServer
directly. It must raise a :class:`~shuffle.errors.PartitionError` (``PartitionUnreachable`` when
the producing TaskManager is gone) rather than a transport's own exception, so the scheduler
sees a lost partition.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from shuffle.descriptors import ShuffleDescriptor
from shuffle.errors import PartitionFileCorrupted, PartitionFileTruncated
from shuffle.partition_file import decode_range, decode_range_header, range_header_size
from shuffle.ranges import IndexRange

__all__ = ["FetchChunk", "fetch_range"]

FetchChunk = Callable[[ShuffleDescriptor, IndexRange, int, int], bytes]


def fetch_range(
    fetch_chunk: FetchChunk,
    descriptor: ShuffleDescriptor,
    subpartitions: IndexRange,
    chunk_bytes: int,
) -> pa.Table:
    """The rows of one range of a remote partition, checksums checked on arrival."""
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be positive, not {chunk_bytes}")
    where = f"{descriptor.path} on task manager {descriptor.task_manager_id} ({descriptor.node_id})"
    partition_id = descriptor.partition_id
    received = bytearray()
    header_size: int | None = None
    total: int | None = None
    layout = None
    while total is None or len(received) < total:
        chunk = fetch_chunk(descriptor, subpartitions, len(received), chunk_bytes)
        _check_chunk(chunk, chunk_bytes, partition_id, where, subpartitions, len(received), total)
        received += chunk
        if header_size is None:
            header_size = range_header_size(bytes(received[:64]))
        if layout is None and header_size is not None and len(received) >= header_size:
            layout = decode_range_header(partition_id, where, bytes(received[:header_size]))
            if layout.subpartitions != subpartitions:
                raise PartitionFileCorrupted(
                    partition_id,
                    where,
                    f"asked for range {subpartitions}, got {layout.subpartitions}",
                )
            total = header_size + layout.data_size
    if len(received) != total:
        raise PartitionFileCorrupted(
            partition_id, where, f"{len(received)} bytes for a {total}-byte range"
        )
    data = pa.py_buffer(received).slice(header_size)
    return decode_range(partition_id, where, layout, data)


def _check_chunk(
    chunk: bytes,
    chunk_bytes: int,
    partition_id,
    where: str,
    subpartitions: IndexRange,
    received: int,
    total: int | None,
) -> None:
    """A chunk ends the range too early when empty (``received`` bytes of ``total``, None:
    not known yet), and is corrupt when larger than asked."""
    if not chunk:
        expected = "an unknown number of" if total is None else str(total)
        raise PartitionFileTruncated(
            partition_id, where, f"range {subpartitions} ended at {received} of {expected} bytes"
        )
    if len(chunk) > chunk_bytes:
        raise PartitionFileCorrupted(
            partition_id, where, f"server sent {len(chunk)} bytes when asked for {chunk_bytes}"
        )
