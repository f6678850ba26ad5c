"""Reading subpartition ranges from a partition file on this node.

A reader opens the file once and reads its footer and index (two small reads from the tail);
after that each range is one read of one contiguous byte range, checked and decoded.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pyarrow as pa

from shuffle.errors import PartitionFileTruncated, PartitionNotFound
from shuffle.ids import PartitionId
from shuffle.partition_file import FOOTER, PartitionIndex, decode_footer, decode_index, decode_range
from shuffle.ranges import IndexRange

__all__ = ["PartitionFileReader", "read_index", "read_range"]


class PartitionFileReader:
    """An open partition file. Not thread-safe; open one per thread (opening is cheap)."""

    def __init__(self, path: str | os.PathLike[str], partition_id: PartitionId) -> None:
        self.path = str(path)
        self.partition_id = partition_id
        try:
            self._file = pa.OSFile(self.path, "rb")
        except FileNotFoundError as error:
            raise PartitionNotFound(partition_id, self.path) from error
        try:
            self.index = read_index(self._file.size(), self._read_at, partition_id, self.path)
        except BaseException:
            self._file.close()
            raise

    @property
    def num_subpartitions(self) -> int:
        return self.index.num_subpartitions

    @property
    def file_size(self) -> int:
        return self._file.size()

    @property
    def schema(self) -> pa.Schema:
        return self.index.schema

    def read_range(self, subpartitions: IndexRange) -> pa.Table:
        """The rows of subpartitions ``[start, end]``, in subpartition order, checksums checked."""
        layout = self.index.range_layout(subpartitions)
        data = self._read_at(layout.file_offset, layout.data_size)
        return decode_range(self.partition_id, self.path, layout, data)

    def _read_at(self, offset: int, size: int) -> pa.Buffer:
        if size == 0:
            return pa.py_buffer(b"")
        self._file.seek(offset)
        data = self._file.read_buffer(size)
        if data.size != size:
            raise PartitionFileTruncated(
                self.partition_id, self.path, f"read {data.size} of {size} bytes at offset {offset}"
            )
        return data

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> PartitionFileReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_range(
    path: str | os.PathLike[str], partition_id: PartitionId, subpartitions: IndexRange
) -> pa.Table:
    """Open, read one range, close."""
    with PartitionFileReader(path, partition_id) as reader:
        return reader.read_range(subpartitions)


def read_index(
    file_size: int,
    read_at: Callable[[int, int], pa.Buffer | bytes],
    partition_id: PartitionId,
    where: str,
) -> PartitionIndex:
    """The checked index of a partition file of ``file_size`` bytes, read through
    ``read_at(offset, size)`` (which must return exactly ``size`` bytes or raise)."""
    tail = bytes(read_at(max(0, file_size - FOOTER.size), min(file_size, FOOTER.size)))
    footer = decode_footer(partition_id, where, tail, file_size)
    section = bytes(read_at(footer.index_offset, file_size - FOOTER.size - footer.index_offset))
    return decode_index(partition_id, where, section, footer)
