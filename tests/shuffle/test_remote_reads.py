"""Serving ranges to other nodes in bounded chunks, and the input gate that reads them."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from shuffle import (
    HashPartitioner,
    IndexRange,
    InputGate,
    PartitionId,
    PartitionNotFound,
    PartitionServer,
    PartitionUnreachable,
    fetch_range,
    read_range,
)

PIDS = [PartitionId("left->join", index) for index in range(3)]


@pytest.fixture
def written(shuffle_directory, mixed_table):
    partitions = []
    for index, partition_id in enumerate(PIDS):
        with shuffle_directory.writer(partition_id, 6, HashPartitioner(("key",))) as writer:
            writer.write(mixed_table(1500, seed=index))
            partitions.append(writer.finish())
    return partitions


class RecordingTransport:
    """Calls the server as the Ray actor would, and remembers every chunk it carried."""

    def __init__(self, server: PartitionServer) -> None:
        self.server = server
        self.chunks: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, descriptor, subpartitions, offset, max_bytes):
        chunk = self.server.read_chunk(descriptor.partition_id, subpartitions, offset, max_bytes)
        with self._lock:
            self.chunks.append(len(chunk))
        return chunk


def test_a_remote_range_equals_the_local_read_and_no_chunk_exceeds_the_bound(
    shuffle_directory, written
):
    server = PartitionServer(shuffle_directory, max_chunk_bytes=4096)
    transport = RecordingTransport(server)
    for partition in written:
        descriptor = partition.descriptor("tm-1", "node-a")
        for start in range(6):
            for end in range(start, 6):
                subpartitions = IndexRange(start, end)
                remote = fetch_range(transport, descriptor, subpartitions, chunk_bytes=1 << 20)
                assert remote.equals(
                    read_range(partition.path, partition.partition_id, subpartitions)
                )
    assert max(transport.chunks) <= 4096
    assert sum(1 for size in transport.chunks if size == 4096) > 10  # ranges did span chunks


def test_the_server_caps_a_request_at_its_own_bound(shuffle_directory, written):
    server = PartitionServer(shuffle_directory, max_chunk_bytes=100)
    chunk = server.read_chunk(PIDS[0], IndexRange(0, 5), 0, 10**9)
    assert len(chunk) == 100


def test_the_framed_range_ends_with_an_empty_chunk(shuffle_directory, written):
    server = PartitionServer(shuffle_directory)
    whole = server.read_chunk(PIDS[0], IndexRange(2, 3), 0, 1 << 30)
    assert server.read_chunk(PIDS[0], IndexRange(2, 3), len(whole), 1000) == b""
    assert server.read_chunk(PIDS[0], IndexRange(2, 3), len(whole) - 5, 1000) == whole[-5:]


def test_concurrent_fetches_through_a_thread_pool_agree(shuffle_directory, written):
    server = PartitionServer(shuffle_directory, max_chunk_bytes=2048)
    transport = RecordingTransport(server)
    jobs = [(p, IndexRange(s, s)) for p in written for s in range(6)] * 3
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(
                lambda job: fetch_range(transport, job[0].descriptor("tm", "n"), job[1], 3000), jobs
            )
        )
    for (partition, subpartitions), table in zip(jobs, results):
        assert table.equals(read_range(partition.path, partition.partition_id, subpartitions))


def test_a_rewritten_partition_is_served_fresh(shuffle_directory, written):
    server = PartitionServer(shuffle_directory)
    server.read_chunk(PIDS[0], IndexRange(0, 5), 0, 1 << 20)  # index cached
    with shuffle_directory.writer(PIDS[0], 2, HashPartitioner(("v",))) as writer:
        writer.write(pa.table({"v": [1, 2, 3]}))
        rewritten = writer.finish()
    remote = fetch_range(
        lambda d, r, o, m: server.read_chunk(d.partition_id, r, o, m),
        rewritten.descriptor("tm", "n"),
        IndexRange(0, 1),
        1 << 20,
    )
    assert sorted(remote.column("v").to_pylist()) == [1, 2, 3]


def test_the_server_reports_a_released_partition_as_not_found(shuffle_directory, written):
    server = PartitionServer(shuffle_directory)
    server.read_chunk(PIDS[1], IndexRange(0, 0), 0, 100)
    shuffle_directory.release([PIDS[1]])
    with pytest.raises(PartitionNotFound, match="left->join#1"):
        server.read_chunk(PIDS[1], IndexRange(0, 0), 0, 100)


def test_the_server_refuses_bad_requests(shuffle_directory, written):
    server = PartitionServer(shuffle_directory)
    with pytest.raises(IndexError, match="outside partition left->join#0 of 6"):
        server.read_chunk(PIDS[0], IndexRange(5, 6), 0, 100)
    with pytest.raises(ValueError, match="bad chunk request"):
        server.read_chunk(PIDS[0], IndexRange(0, 0), -1, 100)
    with pytest.raises(ValueError, match="bad chunk request"):
        server.read_chunk(PIDS[0], IndexRange(0, 0), 0, 0)


# -- the input gate --------------------------------------------------------------------------


def _inputs(written, ranges):
    nodes = ["node-a", "node-b", "node-a"]
    return [
        (partition.descriptor(f"tm-{node}", node), subpartitions)
        for partition, node in zip(written, nodes)
        for subpartitions in ranges
    ]


def test_the_gate_yields_one_table_per_input_in_order_from_local_and_remote(
    shuffle_directory, written
):
    transport = RecordingTransport(PartitionServer(shuffle_directory, max_chunk_bytes=1500))
    inputs = _inputs(written, [IndexRange(0, 1), IndexRange(2, 5)])
    tables = list(InputGate(inputs, "node-a", transport, chunk_bytes=1000))
    assert len(tables) == len(inputs)
    for (descriptor, subpartitions), table in zip(inputs, tables):
        assert table.equals(read_range(descriptor.path, descriptor.partition_id, subpartitions))
    remote_inputs = sum(1 for d, _ in inputs if d.node_id != "node-a")
    assert transport.chunks and remote_inputs == 2  # only node-b's partition went remote
    total = sum(p.rows_per_subpartition.sum() for p in written)
    assert InputGate(inputs, "node-a", transport).read_all().num_rows == total


def test_the_gate_overlaps_remote_fetches(shuffle_directory, written):
    """Two fetches must be in flight at once to pass the barrier; one at a time would time out."""
    server = PartitionServer(shuffle_directory)
    both_in_flight = threading.Barrier(2, timeout=20)
    first_chunks = set()
    lock = threading.Lock()

    def transport(descriptor, subpartitions, offset, max_bytes):
        if offset == 0:
            with lock:
                first = descriptor.partition_id not in first_chunks
                first_chunks.add(descriptor.partition_id)
            if first:
                both_in_flight.wait()
        return server.read_chunk(descriptor.partition_id, subpartitions, offset, max_bytes)

    inputs = [(p.descriptor("tm-b", "node-b"), IndexRange(0, 5)) for p in written[:2]]
    tables = list(InputGate(inputs, "node-a", transport, concurrent_fetches=2))
    assert [t.num_rows for t in tables] == [p.rows_per_subpartition.sum() for p in written[:2]]


def test_a_lost_remote_partition_surfaces_as_a_partition_error(shuffle_directory, written):
    def transport(descriptor, subpartitions, offset, max_bytes):
        raise PartitionUnreachable(
            descriptor.partition_id, descriptor.task_manager_id, "actor died"
        )

    inputs = _inputs(written, [IndexRange(0, 5)])
    gate = iter(InputGate(inputs, "node-a", transport))
    assert next(gate).num_rows > 0  # node-a's partition
    with pytest.raises(PartitionUnreachable, match="left->join#1 at tm-node-b: actor died"):
        next(gate)


def test_a_local_file_that_vanished_is_not_found(shuffle_directory, written):
    os.unlink(written[0].path)
    with pytest.raises(PartitionNotFound):
        InputGate(_inputs(written, [IndexRange(0, 0)]), "node-a", lambda *a: b"").read_all()


def test_abandoning_the_gate_midway_stops_cleanly(shuffle_directory, written):
    server = PartitionServer(shuffle_directory)
    inputs = [(p.descriptor("tm-b", "node-b"), IndexRange(s, s)) for p in written for s in range(6)]
    gate = iter(
        InputGate(inputs, "node-a", lambda d, r, o, m: server.read_chunk(d.partition_id, r, o, m))
    )
    next(gate)
    gate.close()


def test_the_gate_checks_its_inputs(written):
    descriptor = written[0].descriptor("tm-b", "node-b")
    with pytest.raises(ValueError, match="no fetch_chunk was given"):
        InputGate([(descriptor, IndexRange(0, 0))], "node-a")
    with pytest.raises(ValueError, match=r"range \[3, 6\] outside partition left->join#0"):
        InputGate([(descriptor, IndexRange(3, 6))], "node-b")


def test_a_gate_without_inputs_yields_nothing():
    assert list(InputGate([], "node-a")) == []
    assert InputGate([], "node-a").read_all().num_rows == 0
