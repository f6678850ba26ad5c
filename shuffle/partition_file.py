"""The partition file format, and the header that frames a range on the wire.

One producer task writes one file. Its subpartitions come back to back, so a consumer's range
``[start, end]`` is one contiguous byte range: one read, local or remote (FLIP-187's "consume a
subpartition range"). The index at the end says where each subpartition is; the fixed-size
footer after it says where the index is, so a reader finds everything from the file's tail::

    +-----------------------------------------------+
    | subpartition i: Arrow IPC stream, LZ4 frames   |  offset 0; only subpartitions that hold
    | subpartition j: Arrow IPC stream, LZ4 frames   |  rows, in order; an empty one has no
    | ...                                            |  bytes and no index entry
    +-----------------------------------------------+
    | index: one INDEX_ENTRY per subpartition held   |  offset, length, rows, crc32, and the
    | the schema, as an Arrow IPC schema message     |  subpartition (32 bytes); so an empty
    +-----------------------------------------------+  range still has columns
    | footer (FOOTER, 36 bytes)                      |  index offset, subpartitions, entries,
    |   ... "TIDALPF2"                               |  crc32 of the index section, version,
    +-----------------------------------------------+  magic last

The index holds only the subpartitions written to, so a producer that writes a few rows into
ten thousand subpartitions writes and serves an index of a few entries: writing a file and
reading a range cost what the file holds, not the consumer's parallelism. A range is found by
binary search of the entries' subpartitions.

All integers are little-endian. Each subpartition's crc32 (zlib's) covers its bytes exactly as
stored; the footer's covers the index entries and the schema. A remote consumer receives a range
as a *range header* (the range's index entries and the schema, with its own crc32) followed by
the range's bytes, and checks every subpartition's crc32 itself, end to end.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from shuffle.errors import ChecksumMismatch, PartitionFileCorrupted, PartitionFileTruncated
from shuffle.ids import PartitionId
from shuffle.ranges import IndexRange

__all__ = [
    "FOOTER",
    "Footer",
    "FORMAT_VERSION",
    "INDEX_ENTRY",
    "MAGIC",
    "RANGE_HEADER",
    "PartitionIndex",
    "RangeLayout",
    "decode_footer",
    "decode_index",
    "decode_range",
    "decode_range_header",
    "encode_index_and_footer",
    "encode_range_header",
    "footer_checksum",
    "range_header_size",
]

MAGIC = b"TIDALPF2"
FORMAT_VERSION = 2
INDEX_ENTRY = np.dtype(
    [
        ("offset", "<u8"),
        ("length", "<u8"),
        ("rows", "<u8"),
        ("checksum", "<u4"),
        ("subpartition", "<u4"),
    ]
)
# index offset, num subpartitions, index entries, schema length, index crc32, version,
# reserved, magic
FOOTER = struct.Struct("<QIIIIHH8s")
# magic, header length (all of it), first and last subpartition, entries, schema length,
# crc32 of the rest
RANGE_HEADER = struct.Struct("<4sIIIIII")
_RANGE_MAGIC = b"TPR2"
_READ_OPTIONS = pa.ipc.IpcReadOptions(use_threads=True)
_SMALL_READ_OPTIONS = pa.ipc.IpcReadOptions(use_threads=False)  # a thread pool costs more
_SMALL_STREAM = 1 << 20


@dataclass(frozen=True, slots=True, eq=False)
class PartitionIndex:
    """What a partition file's index says: where each subpartition that holds rows is (in
    subpartition order), how many subpartitions the partition has, and the schema."""

    entries: np.ndarray  # INDEX_ENTRY, one per subpartition holding rows
    schema_bytes: bytes
    num_subpartitions: int

    @property
    def schema(self) -> pa.Schema:
        return pa.ipc.read_schema(pa.py_buffer(self.schema_bytes))

    def dense(self, field: str) -> np.ndarray:
        """``field`` of every subpartition (0 for an empty one): for tests and tools."""
        values = np.zeros(self.num_subpartitions, dtype=np.int64)
        values[self.entries["subpartition"]] = self.entries[field]
        return values

    def range_layout(self, subpartitions: IndexRange) -> RangeLayout:
        if subpartitions.end >= self.num_subpartitions:
            raise IndexError(
                f"subpartitions {subpartitions} outside a partition of {self.num_subpartitions}"
            )
        held = self.entries["subpartition"]
        first = int(np.searchsorted(held, subpartitions.start, side="left"))
        last = int(np.searchsorted(held, subpartitions.end, side="right"))
        return RangeLayout(subpartitions, self.entries[first:last], self.schema_bytes)


@dataclass(frozen=True, slots=True, eq=False)
class RangeLayout:
    """The index entries of one subpartition range (those holding rows): where its bytes are
    and how to check them."""

    subpartitions: IndexRange
    entries: np.ndarray  # INDEX_ENTRY, one per subpartition of the range holding rows
    schema_bytes: bytes

    @property
    def file_offset(self) -> int:
        return int(self.entries["offset"][0]) if len(self.entries) else 0

    @property
    def data_size(self) -> int:
        return int(self.entries["length"].sum())

    @property
    def num_rows(self) -> int:
        return int(self.entries["rows"].sum())


def encode_index_and_footer(
    data_size: int, entries: np.ndarray, num_subpartitions: int, schema: pa.Schema
) -> bytes:
    """The bytes that follow the subpartitions' data (``data_size`` bytes) in a partition file:
    ``entries`` of the subpartitions holding rows, in order, of ``num_subpartitions``."""
    schema_bytes = schema.serialize().to_pybytes()
    section = entries.astype(INDEX_ENTRY).tobytes() + schema_bytes
    footer = FOOTER.pack(
        data_size,
        num_subpartitions,
        len(entries),
        len(schema_bytes),
        zlib.crc32(section),
        FORMAT_VERSION,
        0,
        MAGIC,
    )
    return section + footer


def footer_checksum(tail: bytes) -> int:
    """A file's fingerprint from its last ``FOOTER.size`` bytes: the crc32 of its footer,
    which holds the crc32 of its index, which holds every subpartition's crc32 and length."""
    return zlib.crc32(tail[-FOOTER.size :])


@dataclass(frozen=True, slots=True)
class Footer:
    index_offset: int
    num_subpartitions: int
    entries: int
    schema_length: int
    index_crc: int


def decode_footer(partition_id: PartitionId, where: str, tail: bytes, file_size: int) -> Footer:
    """Check the footer (the last ``FOOTER.size`` bytes of a file of ``file_size`` bytes)."""
    if file_size < FOOTER.size or tail[-len(MAGIC) :] != MAGIC:
        raise PartitionFileTruncated(
            partition_id, where, f"no footer in its {file_size} bytes: cut short or never finished"
        )
    index_offset, subpartitions, count, schema_length, index_crc, version, _, _ = FOOTER.unpack(
        tail
    )
    if version != FORMAT_VERSION:
        raise PartitionFileCorrupted(partition_id, where, f"unknown format version {version}")
    expected_size = index_offset + count * INDEX_ENTRY.itemsize + schema_length + FOOTER.size
    if expected_size != file_size or count > subpartitions:
        raise PartitionFileCorrupted(
            partition_id, where, f"footer describes {expected_size} bytes, the file has {file_size}"
        )
    return Footer(index_offset, subpartitions, count, schema_length, index_crc)


def decode_index(
    partition_id: PartitionId, where: str, section: bytes, footer: Footer
) -> PartitionIndex:
    """Check and parse the index section (entries then schema) that the footer points at."""
    if zlib.crc32(section) != footer.index_crc:
        raise ChecksumMismatch(partition_id, where, "in the index")
    count = footer.entries
    entries = np.frombuffer(section, dtype=INDEX_ENTRY, count=count)
    ends = entries["offset"] + entries["length"]
    starts_ok = count == 0 or (
        entries["offset"][0] == 0 and (entries["offset"][1:] == ends[:-1]).all()
    )
    if not starts_ok or (count and int(ends[-1]) != footer.index_offset):
        raise PartitionFileCorrupted(partition_id, where, "index entries are not back to back")
    held = entries["subpartition"].astype(np.int64)
    if count and (held[-1] >= footer.num_subpartitions or (np.diff(held) <= 0).any()):
        raise PartitionFileCorrupted(partition_id, where, "index entries are out of order")
    return PartitionIndex(
        entries, bytes(section[count * INDEX_ENTRY.itemsize :]), footer.num_subpartitions
    )


def encode_range_header(layout: RangeLayout) -> bytes:
    body = layout.entries.astype(INDEX_ENTRY).tobytes() + layout.schema_bytes
    return (
        RANGE_HEADER.pack(
            _RANGE_MAGIC,
            RANGE_HEADER.size + len(body),
            layout.subpartitions.start,
            layout.subpartitions.end,
            len(layout.entries),
            len(layout.schema_bytes),
            zlib.crc32(body),
        )
        + body
    )


def range_header_size(prefix: bytes) -> int | None:
    """The whole header's size, once ``prefix`` holds at least ``RANGE_HEADER.size`` bytes."""
    if len(prefix) < RANGE_HEADER.size:
        return None
    return RANGE_HEADER.unpack_from(prefix)[1]


def decode_range_header(partition_id: PartitionId, where: str, header: bytes) -> RangeLayout:
    magic, size, start, end, count, schema_length, crc = RANGE_HEADER.unpack_from(header)
    body = header[RANGE_HEADER.size : size]
    if magic != _RANGE_MAGIC or len(body) != count * INDEX_ENTRY.itemsize + schema_length:
        raise PartitionFileCorrupted(partition_id, where, "malformed range header")
    if zlib.crc32(body) != crc:
        raise ChecksumMismatch(partition_id, where, "in the range header")
    entries = np.frombuffer(body, dtype=INDEX_ENTRY, count=count)
    held = entries["subpartition"]
    if count and (held[0] < start or held[-1] > end):
        raise PartitionFileCorrupted(partition_id, where, "range header entries outside its range")
    schema_bytes = bytes(body[count * INDEX_ENTRY.itemsize :])
    return RangeLayout(IndexRange(start, end), entries, schema_bytes)


def decode_range(
    partition_id: PartitionId, where: str, layout: RangeLayout, data: pa.Buffer
) -> pa.Table:
    """The rows of a range from its bytes (``layout.data_size`` of them), checking each
    subpartition's crc32 before decoding it."""
    if data.size != layout.data_size:
        raise PartitionFileTruncated(
            partition_id,
            where,
            f"range {layout.subpartitions} has {data.size} of {layout.data_size} bytes",
        )
    schema = pa.ipc.read_schema(pa.py_buffer(layout.schema_bytes))
    batches: list[pa.RecordBatch] = []
    position = 0
    for entry in layout.entries.tolist():
        _, length, rows, checksum, subpartition = entry
        stream = data.slice(position, length)
        position += length
        if length == 0:
            continue
        if zlib.crc32(stream) != checksum:
            raise ChecksumMismatch(partition_id, where, f"in subpartition {subpartition}")
        try:
            options = _READ_OPTIONS if length > _SMALL_STREAM else _SMALL_READ_OPTIONS
            decoded = pa.ipc.open_stream(stream, options=options).read_all().to_batches()
        except (pa.ArrowInvalid, OSError) as error:
            raise PartitionFileCorrupted(
                partition_id, where, f"subpartition {subpartition}: {error}"
            ) from error
        if sum(batch.num_rows for batch in decoded) != rows:
            raise PartitionFileCorrupted(
                partition_id, where, f"subpartition {subpartition} row count"
            )
        batches.extend(decoded)
    try:
        return pa.Table.from_batches(batches, schema=schema)
    except pa.ArrowInvalid as error:
        raise PartitionFileCorrupted(
            partition_id, where, f"range {layout.subpartitions}: {error}"
        ) from error
