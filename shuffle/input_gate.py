"""InputGate: a consumer task's input, read range by range from local files or other nodes.

A task consumes, from every partition of each consumed partition group, one subpartition range
(FLIP-187). The gate is given those as ``(ShuffleDescriptor, IndexRange)`` pairs and yields one
Arrow table per pair, in the order given, so a task's input is the same on every run. A
partition on this node is read straight from its file; a remote one is fetched in bounded
chunks through ``fetch_chunk`` (see :mod:`shuffle.remote`). Remote fetches run ahead on a small
thread pool while earlier inputs are read and consumed, so the network waits of many producers
overlap; at most ``max_fetches_ahead`` fetched tables wait in memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pyarrow as pa

from shuffle.descriptors import ShuffleDescriptor
from shuffle.errors import PartitionFileCorrupted
from shuffle.ranges import IndexRange
from shuffle.reader import PartitionFileReader
from shuffle.remote import FetchChunk, fetch_range
from shuffle.server import DEFAULT_CHUNK_BYTES

__all__ = ["InputGate"]


class InputGate:
    def __init__(
        self,
        inputs: Sequence[tuple[ShuffleDescriptor, IndexRange]],
        local_node_id: str,
        fetch_chunk: FetchChunk | None = None,
        *,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        concurrent_fetches: int = 4,
        max_fetches_ahead: int = 8,
    ) -> None:
        for descriptor, subpartitions in inputs:
            if subpartitions.end >= descriptor.num_subpartitions:
                raise ValueError(
                    f"range {subpartitions} outside partition {descriptor.partition_id} "
                    f"of {descriptor.num_subpartitions} subpartitions"
                )
        self.inputs = list(inputs)
        self.local_node_id = local_node_id
        remote = [d.partition_id for d, _ in self.inputs if not d.is_local_to(local_node_id)]
        if remote and fetch_chunk is None:
            raise ValueError(
                f"partitions {[str(p) for p in remote[:3]]} are on other nodes than "
                f"{local_node_id} and no fetch_chunk was given"
            )
        if concurrent_fetches < 1 or max_fetches_ahead < 1:
            raise ValueError("concurrent_fetches and max_fetches_ahead must be positive")
        self._fetch_chunk = fetch_chunk
        self.local_bytes = 0  # stored bytes of the local ranges read so far
        self._chunk_bytes = chunk_bytes
        self._concurrent_fetches = concurrent_fetches
        self._max_fetches_ahead = max_fetches_ahead

    def __iter__(self) -> Iterator[pa.Table]:
        remote_positions = [
            position
            for position, (descriptor, _) in enumerate(self.inputs)
            if not descriptor.is_local_to(self.local_node_id)
        ]
        if not remote_positions:
            for descriptor, subpartitions in self.inputs:
                yield self._read_local(descriptor, subpartitions)
            return
        pool = ThreadPoolExecutor(
            min(self._concurrent_fetches, len(remote_positions)), thread_name_prefix="tidal-fetch"
        )
        fetches: dict[int, Future[pa.Table]] = {}
        upcoming = iter(remote_positions)
        try:
            for position, (descriptor, subpartitions) in enumerate(self.inputs):
                while len(fetches) < self._max_fetches_ahead:
                    ahead = next(upcoming, None)
                    if ahead is None:
                        break
                    fetches[ahead] = pool.submit(
                        fetch_range, self._fetch_chunk, *self.inputs[ahead], self._chunk_bytes
                    )
                if position in fetches:
                    yield fetches.pop(position).result()
                else:
                    yield self._read_local(descriptor, subpartitions)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _read_local(self, descriptor: ShuffleDescriptor, subpartitions: IndexRange) -> pa.Table:
        with PartitionFileReader(descriptor.path, descriptor.partition_id) as reader:
            size = reader.file_size
            if descriptor.size and size != descriptor.size:
                raise PartitionFileCorrupted(
                    descriptor.partition_id,
                    descriptor.path,
                    f"{size} bytes where its producer wrote {descriptor.size}",
                )
            table = reader.read_range(subpartitions)
            self.local_bytes += reader.index.range_layout(subpartitions).data_size
        return table

    def read_all(self) -> pa.Table:
        """Every input concatenated, in order. Inputs must share one schema."""
        tables = list(self)
        if not tables:
            return pa.table({})
        return pa.concat_tables(tables)
