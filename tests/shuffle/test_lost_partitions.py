"""A missing, truncated or corrupted partition file is a typed error naming the partition, on
the local path and on the remote one alike, so the scheduler can treat it as lost."""

from __future__ import annotations

import os
import pickle
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from shuffle import (
    ChecksumMismatch,
    IndexRange,
    PartitionError,
    PartitionFileCorrupted,
    PartitionFileTruncated,
    PartitionId,
    PartitionNotFound,
    PartitionServer,
    PartitionUnreachable,
    RebalancePartitioner,
    fetch_range,
    read_range,
)
from shuffle.partition_file import FOOTER, INDEX_ENTRY, RangeLayout, decode_range

PID = PartitionId("scan->agg", 7)


@pytest.fixture
def written(shuffle_directory, mixed_table):
    with shuffle_directory.writer(PID, 4, RebalancePartitioner()) as writer:
        writer.write(mixed_table(800))
        return writer.finish()


WHOLE = IndexRange(0, 3)


def _local(written, subpartitions=WHOLE):
    return read_range(written.path, PID, subpartitions)


@pytest.fixture
def remote(shuffle_directory):
    server = PartitionServer(shuffle_directory, max_chunk_bytes=1000)

    def read(written, subpartitions=WHOLE):
        descriptor = written.descriptor("tm-1", "node-a")
        return fetch_range(
            lambda d, r, offset, size: server.read_chunk(d.partition_id, r, offset, size),
            descriptor,
            subpartitions,
            chunk_bytes=700,
        )

    return read


@pytest.fixture(params=["local", "remote"])
def read(request, remote):
    return _local if request.param == "local" else remote


def _flip_byte(path: str, offset: int) -> None:
    with open(path, "r+b") as file:
        file.seek(offset)
        byte = file.read(1)
        file.seek(offset)
        file.write(bytes([byte[0] ^ 0x40]))


def test_a_missing_file_is_partition_not_found(written, read):
    os.unlink(written.path)
    with pytest.raises(PartitionNotFound) as caught:
        read(written)
    assert caught.value.partition_id == PID
    assert "scan->agg#7" in str(caught.value)


@pytest.mark.parametrize("subpartition", [0, 2, 3])
def test_a_flipped_data_byte_is_a_checksum_mismatch_naming_the_subpartition(
    written, read, subpartition
):
    offsets = np.concatenate(([0], np.cumsum(written.bytes_per_subpartition)))
    _flip_byte(
        written.path, int(offsets[subpartition] + written.bytes_per_subpartition[subpartition] // 2)
    )
    with pytest.raises(ChecksumMismatch, match=f"in subpartition {subpartition}") as caught:
        read(written)
    assert caught.value.partition_id == PID
    other = IndexRange(1, 1) if subpartition != 1 else IndexRange(0, 0)
    assert read(written, other).num_rows > 0  # the rest of the file still reads


def test_a_flipped_index_byte_is_a_checksum_mismatch(written, read):
    _flip_byte(written.path, written.total_bytes + 9)
    with pytest.raises(ChecksumMismatch, match="in the index"):
        read(written)


@pytest.mark.parametrize("keep", [0, 10, "half", "all but the footer", "all but one byte"])
def test_a_truncated_file_is_partition_file_truncated(written, read, keep):
    size = os.path.getsize(written.path)
    keep = {
        "half": size // 2,
        "all but the footer": size - FOOTER.size,
        "all but one byte": size - 1,
    }.get(keep, keep)
    os.truncate(written.path, keep)
    with pytest.raises(PartitionFileTruncated) as caught:
        read(written)
    assert caught.value.partition_id == PID and written.path in str(caught.value)


def test_a_file_that_is_not_a_partition_is_corrupted(written, read):
    with open(written.path, "wb") as file:
        file.write(b"x" * 100)
    with pytest.raises(PartitionFileCorrupted):
        read(written)


def test_a_footer_that_lies_about_the_size_is_corrupted(written, read):
    footer = Path(written.path).read_bytes()[-FOOTER.size :]
    with open(written.path, "ab") as file:
        file.write(footer)  # a stray second footer
    with pytest.raises(PartitionFileCorrupted, match="footer describes"):
        read(written)


def test_all_lost_partition_errors_share_one_base_and_survive_pickling():
    for error_type in (
        PartitionNotFound,
        PartitionUnreachable,
        PartitionFileCorrupted,
        PartitionFileTruncated,
        ChecksumMismatch,
    ):
        error = error_type(PID, "/data/7.tpf", "some detail")
        assert isinstance(error, PartitionError)
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is error_type
        assert (copy.partition_id, copy.location, copy.detail) == (
            PID,
            "/data/7.tpf",
            "some detail",
        )
        assert str(copy) == str(error) and "scan->agg#7 at /data/7.tpf: some detail" in str(copy)
    assert issubclass(ChecksumMismatch, PartitionFileCorrupted)
    assert issubclass(PartitionFileTruncated, PartitionFileCorrupted)


def test_an_undecodable_stream_with_a_matching_checksum_is_corrupted():
    """A bug or a bad disk could store garbage under a valid checksum; it is still typed."""
    garbage = pa.py_buffer(b"\xff\xff\xff\xff" + b"\x10" * 60)
    entries = np.array([(0, garbage.size, 1, zlib.crc32(garbage), 0)], dtype=INDEX_ENTRY)
    layout = RangeLayout(
        IndexRange(0, 0), entries, pa.schema([("v", pa.int64())]).serialize().to_pybytes()
    )
    with pytest.raises(PartitionFileCorrupted, match="subpartition 0"):
        decode_range(PID, "here", layout, garbage)
