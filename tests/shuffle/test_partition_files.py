"""Writing result partitions and reading them back by subpartition range, with real files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from shuffle import (
    BroadcastPartitioner,
    HashPartitioner,
    IndexRange,
    PartitionFileReader,
    PartitionId,
    RebalancePartitioner,
    ResultPartitionWriter,
    partition_rows,
    read_range,
)
from shuffle.partition_file import FOOTER, INDEX_ENTRY, MAGIC

PID = PartitionId("orders->join", 3)


def _every_range(count: int):
    return [IndexRange(start, end) for start in range(count) for end in range(start, count)]


def _sorted_rows(table: pa.Table) -> list[tuple]:
    columns = [table.column(name).to_pylist() for name in table.column_names]
    return sorted(zip(*columns), key=repr)


def test_every_range_reads_exactly_the_rows_written_to_it(shuffle_directory, mixed_table):
    table = mixed_table(3000)
    num_subpartitions = 7
    with shuffle_directory.writer(PID, num_subpartitions, HashPartitioner(("key",))) as writer:
        writer.write(table)
        written = writer.finish()
    expected = partition_rows(table, HashPartitioner(("key",)), num_subpartitions)
    with PartitionFileReader(written.path, PID) as reader:
        assert reader.num_subpartitions == num_subpartitions
        assert reader.schema.equals(table.schema)
        for subpartitions in _every_range(num_subpartitions):
            start, end = (
                expected.offsets[subpartitions.start],
                expected.offsets[subpartitions.end + 1],
            )
            got = reader.read_range(subpartitions)
            assert got.equals(expected.rows.slice(start, end - start)), subpartitions


@pytest.mark.parametrize("buffer_bytes", [0, 20_000, 1 << 30])
def test_many_writes_land_in_the_same_subpartitions_as_one(
    shuffle_directory, mixed_table, buffer_bytes
):
    table = mixed_table(2000, seed=1)
    partitioner = HashPartitioner(("key", "name"))
    writer = shuffle_directory.writer(PID, 5, partitioner, buffer_bytes=buffer_bytes)
    for offset in range(0, 2000, 150):
        piece = table.slice(offset, 150)
        writer.write(piece.to_batches()[0] if offset % 300 else piece)
    written = writer.finish()
    ids = partitioner.assign(table, 5)
    for index in range(5):
        got = read_range(written.path, PID, IndexRange(index, index))
        assert got.equals(table.filter(pa.array(ids == index)))  # order of arrival is kept
    assert written.rows_per_subpartition.tolist() == np.bincount(ids, minlength=5).tolist()


def test_pieces_held_back_are_compressed_as_one_batch(shuffle_directory, mixed_table):
    table = mixed_table(1000)
    with shuffle_directory.writer(PID, 3, RebalancePartitioner()) as writer:
        for offset in range(0, 1000, 100):
            writer.write(table.slice(offset, 100))
        written = writer.finish()
    with PartitionFileReader(written.path, PID) as reader:
        assert [reader.read_range(IndexRange(i, i)).num_rows for i in range(3)] == [334, 333, 333]
    with open(written.path, "rb") as file:
        stream = pa.ipc.open_stream(pa.py_buffer(file.read(int(written.bytes_per_subpartition[0]))))
        assert len(stream.read_all().to_batches()) == 1


def test_bytes_per_subpartition_are_what_the_file_holds(shuffle_directory, mixed_table):
    with shuffle_directory.writer(PID, 6, RebalancePartitioner()) as writer:
        writer.write(mixed_table(600))
        written = writer.finish()
    assert written.bytes_per_subpartition.dtype == np.int64
    assert (written.bytes_per_subpartition > 0).all()
    size = shuffle_directory.path_for(PID).stat().st_size
    schema_length = FOOTER.unpack(Path(written.path).read_bytes()[-FOOTER.size :])[3]
    assert written.total_bytes + 6 * INDEX_ENTRY.itemsize + schema_length + FOOTER.size == size


def test_each_subpartition_is_a_plain_lz4_arrow_stream(shuffle_directory, mixed_table):
    table = mixed_table(500)
    with shuffle_directory.writer(PID, 3, RebalancePartitioner()) as writer:
        writer.write(table)
        written = writer.finish()
    raw = Path(written.path).read_bytes()
    assert raw.endswith(MAGIC)
    offset = 0
    for length, rows in zip(
        written.bytes_per_subpartition.tolist(), written.rows_per_subpartition.tolist()
    ):
        stream = pa.ipc.open_stream(pa.py_buffer(raw[offset : offset + length]))
        assert stream.read_all().num_rows == rows
        offset += length
    with pa.ipc.open_stream(pa.py_buffer(raw[: written.bytes_per_subpartition[0]])) as stream:
        batch = stream.read_next_batch()
    assert batch.num_rows > 0  # and LZ4: the stream is smaller than the rows it holds
    assert written.bytes_per_subpartition[0] < pa.Table.from_batches([batch]).nbytes * 2


def test_empty_subpartitions_take_no_bytes_and_read_as_empty_tables(shuffle_directory):
    table = pa.table({"key": [5] * 10, "text": ["same"] * 10})
    with shuffle_directory.writer(PID, 50, HashPartitioner(("key",))) as writer:
        writer.write(table)
        written = writer.finish()
    assert (written.bytes_per_subpartition > 0).sum() == 1
    empty = int(np.flatnonzero(written.bytes_per_subpartition == 0)[0])
    got = read_range(written.path, PID, IndexRange(empty, empty))
    assert got.num_rows == 0 and got.schema.equals(table.schema)
    assert read_range(written.path, PID, IndexRange(0, 49)).equals(table)


def test_a_producer_without_output_still_writes_a_readable_partition(shuffle_directory):
    schema = pa.schema([("key", pa.int64())])
    with shuffle_directory.writer(PID, 4, HashPartitioner(("key",)), schema=schema) as writer:
        writer.write(pa.table({"key": pa.array([], pa.int64())}))
        written = writer.finish()
    assert written.bytes_per_subpartition.tolist() == [0, 0, 0, 0]
    assert read_range(written.path, PID, IndexRange(0, 3)).schema.equals(schema)


def test_broadcast_reports_its_bytes_once(shuffle_directory, mixed_table):
    table = mixed_table(300)
    with shuffle_directory.writer(PID, 1, BroadcastPartitioner()) as writer:
        writer.write(table)
        written = writer.finish()
    assert written.num_subpartitions == 1
    assert written.bytes_per_subpartition.tolist() == [
        shuffle_directory.path_for(PID).stat().st_size - _trailer_size(written)
    ]
    assert read_range(written.path, PID, IndexRange(0, 0)).equals(table)


def _trailer_size(written) -> int:
    raw = Path(written.path).read_bytes()
    return len(raw) - FOOTER.unpack(raw[-FOOTER.size :])[0]


def test_the_file_appears_only_when_finished(shuffle_directory, mixed_table):
    writer = shuffle_directory.writer(PID, 4, RebalancePartitioner())
    writer.write(mixed_table(100))
    assert not shuffle_directory.path_for(PID).exists()
    writer.finish()
    assert shuffle_directory.path_for(PID).exists()
    assert [p.name for p in shuffle_directory.path_for(PID).parent.iterdir()] == ["3-0.tpf"]


def test_an_aborted_or_failed_write_leaves_no_file(shuffle_directory, mixed_table):
    writer = shuffle_directory.writer(PID, 4, RebalancePartitioner())
    writer.write(mixed_table(100))
    writer.abort()
    with pytest.raises(RuntimeError, match="finished or aborted"):
        writer.finish()
    failing = shuffle_directory.writer(PID, 4, RebalancePartitioner())
    with pytest.raises(KeyError), failing:
        failing.write(mixed_table(100))
        raise KeyError("the producer failed")
    assert not shuffle_directory.path_for(PID).exists()


def test_a_rerun_replaces_the_partition_whole(shuffle_directory):
    for value in (1, 2):
        with shuffle_directory.writer(PID, 2, RebalancePartitioner()) as writer:
            writer.write(pa.table({"v": [value] * 4}))
            written = writer.finish()
    assert read_range(written.path, PID, IndexRange(0, 1)).column("v").to_pylist() == [2] * 4


def test_rows_of_another_schema_are_refused(shuffle_directory):
    writer = shuffle_directory.writer(PID, 2, RebalancePartitioner())
    writer.write(pa.table({"v": [1]}))
    with pytest.raises(ValueError, match="orders->join#3 is written with schema"):
        writer.write(pa.table({"w": ["x"]}))


def test_a_range_outside_the_partition_is_refused(shuffle_directory):
    with shuffle_directory.writer(PID, 2, RebalancePartitioner()) as writer:
        writer.write(pa.table({"v": [1]}))
        written = writer.finish()
    with pytest.raises(IndexError, match=r"\[1, 2\] outside a partition of 2"):
        read_range(written.path, PID, IndexRange(1, 2))


def test_writer_needs_a_subpartition(tmp_path):
    with pytest.raises(ValueError, match="needs a subpartition"):
        ResultPartitionWriter(tmp_path / "p", PID, 0, RebalancePartitioner())


def test_a_few_rows_in_many_subpartitions_make_a_file_of_a_few_entries(
    shuffle_directory, mixed_table
):
    """The index lists only the subpartitions written to: a file's size, and a range read's
    work, follow what the producer wrote, not how many subpartitions the consumer may have."""
    table = mixed_table(5)
    with shuffle_directory.writer(PID, 100_000, RebalancePartitioner(offset=99_997)) as writer:
        writer.write(table)
        written = writer.finish()
    assert written.written.tolist() == [0, 1, 99_997, 99_998, 99_999]  # round robin, wrapped
    assert written.num_subpartitions == 100_000
    size = Path(written.path).stat().st_size
    assert size < written.total_bytes + 5 * INDEX_ENTRY.itemsize + 2000
    with PartitionFileReader(written.path, PID) as reader:
        assert reader.num_subpartitions == 100_000
        assert len(reader.index.entries) == 5
        whole = reader.read_range(IndexRange(0, 99_999))
        assert _sorted_rows(whole) == _sorted_rows(table)
        empty = reader.read_range(IndexRange(10, 99_000))
        assert empty.num_rows == 0 and empty.schema.equals(table.schema)
        for s in written.written.tolist():
            assert reader.read_range(IndexRange(s, s)).num_rows == 1
