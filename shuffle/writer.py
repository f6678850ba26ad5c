"""ResultPartitionWriter: one producer task's output, as one partition file.

The producer hands over its output in as many tables or batches as it likes. Each is split by
the partitioner into subpartitions (see :mod:`shuffle.partitioning`) and the pieces are held,
uncompressed and uncopied, until :meth:`~ResultPartitionWriter.finish`; then each
subpartition's pieces are compressed as one Arrow IPC stream (LZ4) -- on a few threads, each
taking whole subpartitions -- and written back to back, in order, with their index and footer,
into a temporary file that is renamed into place: a reader sees the whole file or none. No fsync:
a partition on a node that crashed is lost with its node anyway.

When the held pieces exceed ``buffer_bytes`` at the start of a write, they are compressed into
per-subpartition in-memory streams first, so a producer that writes a lot in many calls holds
compressed bytes, not its rows; the file is still written only at the end.

``finish`` returns the bytes each subpartition holding rows takes in the file: the numbers the
adaptive scheduler decides parallelism and ranges from. Only those subpartitions are listed, in
the file's index and in what ``finish`` returns, so a task that writes a few rows into ten
thousand subpartitions does a few rows' work. A broadcast partition has one subpartition, so
its bytes are reported once, not once per consumer.
"""

from __future__ import annotations

import itertools
import os
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from shuffle.descriptors import ShuffleDescriptor
from shuffle.ids import PartitionId
from shuffle.partition_file import INDEX_ENTRY, encode_index_and_footer, footer_checksum
from shuffle.partitioning import RowPartitioner, partition_rows

__all__ = ["ResultPartitionWriter", "WrittenPartition"]

_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)
_THREADS = max(1, min(4, os.cpu_count() or 1))
_FILE_NUMBERS = itertools.count()  # temporary names, unique in the process (a counter is
# thread-safe and, unlike uuid4, takes no system call)


@dataclass(frozen=True, slots=True, eq=False)
class WrittenPartition:
    """A finished partition file: where it is and what the subpartitions holding rows hold
    (``written``: their indices, in order; ``lengths`` and ``rows`` theirs)."""

    partition_id: PartitionId
    path: str
    num_subpartitions: int
    written: np.ndarray  # int64 subpartition indices
    lengths: np.ndarray  # int64, bytes in the file
    rows: np.ndarray  # int64
    file_size: int = 0
    checksum: int = 0  # the footer's crc32: see shuffle.survey.fingerprint

    @property
    def total_bytes(self) -> int:
        return int(self.lengths.sum())

    @property
    def bytes_per_subpartition(self) -> np.ndarray:
        """Every subpartition's bytes, 0 for the empty ones (O(num_subpartitions))."""
        return self._dense(self.lengths)

    @property
    def rows_per_subpartition(self) -> np.ndarray:
        return self._dense(self.rows)

    def _dense(self, values: np.ndarray) -> np.ndarray:
        dense = np.zeros(self.num_subpartitions, dtype=np.int64)
        dense[self.written] = values
        return dense

    def descriptor(self, task_manager_id: str, node_id: str) -> ShuffleDescriptor:
        return ShuffleDescriptor(
            self.partition_id, task_manager_id, node_id, self.path, self.num_subpartitions
        )


class _Subpartition:
    """One subpartition's rows: pieces not yet compressed, and the stream they go to."""

    __slots__ = ("pending", "rows", "sink", "stream")

    def __init__(self) -> None:
        self.pending: list[pa.Table] = []
        self.rows = 0
        self.sink: pa.BufferOutputStream | None = None
        self.stream: pa.ipc.RecordBatchStreamWriter | None = None

    def compress_pending(self, schema: pa.Schema) -> None:
        """Append the pending pieces to the stream, as one batch."""
        if not self.pending:
            return
        rows = self.pending[0] if len(self.pending) == 1 else pa.concat_tables(self.pending)
        if self.stream is None:
            self.sink = pa.BufferOutputStream()
            self.stream = pa.ipc.new_stream(self.sink, schema, options=_OPTIONS)
        self.stream.write_table(rows.combine_chunks(), max_chunksize=None)
        self.pending = []

    def finish(self, schema: pa.Schema) -> pa.Buffer | None:
        """The complete stream's bytes, or None for an empty subpartition."""
        self.compress_pending(schema)
        if self.stream is None:
            return None
        self.stream.close()
        data = self.sink.getvalue()
        self.sink = self.stream = None
        return data


class ResultPartitionWriter:
    """Writes one result partition file at ``path``; end with :meth:`finish` or :meth:`abort`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        partition_id: PartitionId,
        num_subpartitions: int,
        partitioner: RowPartitioner,
        *,
        schema: pa.Schema | None = None,
        buffer_bytes: int = 256 << 20,
    ) -> None:
        if num_subpartitions < 1:
            raise ValueError(
                f"partition {partition_id} needs a subpartition, not {num_subpartitions}"
            )
        self.path = Path(path)
        self.partition_id = partition_id
        self.num_subpartitions = num_subpartitions
        self.partitioner = partitioner
        self.schema = schema
        self._buffer_bytes = buffer_bytes
        self._subpartitions: dict[int, _Subpartition] = {}  # only those holding rows
        self._pending_bytes = 0
        self._rows_written = 0
        self._done = False

    def write(self, rows: pa.Table | pa.RecordBatch) -> None:
        """Partition ``rows`` and hold each subpartition's share."""
        self._check_open()
        if self.schema is None:
            self.schema = rows.schema
        elif not rows.schema.equals(self.schema):
            raise ValueError(
                f"partition {self.partition_id} is written with schema {self.schema}, "
                f"got rows of schema {rows.schema}"
            )
        if rows.num_rows == 0:
            return
        if self._pending_bytes > self._buffer_bytes:
            self._compress_all_pending()
        split = partition_rows(rows, self.partitioner, self.num_subpartitions, self._rows_written)
        self._rows_written += rows.num_rows
        for index in np.flatnonzero(split.rows_per_subpartition()).tolist():
            piece = split.subpartition(index)
            subpartition = self._subpartitions.get(index)
            if subpartition is None:
                subpartition = self._subpartitions[index] = _Subpartition()
            subpartition.pending.append(piece)
            subpartition.rows += piece.num_rows
        self._pending_bytes += split.rows.nbytes

    def finish(self) -> WrittenPartition:
        """Write the file (temp file, then rename) and report what each subpartition holds."""
        self._check_open()
        self._done = True
        schema = self.schema if self.schema is not None else pa.schema([])
        held: list[tuple[int, int, int, int]] = []  # subpartition, length, rows, crc32
        temporary = self.path.with_name(
            f".{self.path.name}.{os.getpid()}-{next(_FILE_NUMBERS)}.tmp"
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(temporary, "wb") as file:
                for index, data in self._finished_streams(schema):
                    held.append(
                        (index, data.size, self._subpartitions[index].rows, zlib.crc32(data))
                    )
                    file.write(data)
                entries = np.zeros(len(held), dtype=INDEX_ENTRY)
                if held:
                    columns = np.array(held, dtype=np.int64)
                    entries["subpartition"] = columns[:, 0]
                    entries["length"] = columns[:, 1]
                    entries["offset"] = np.cumsum(columns[:, 1]) - columns[:, 1]
                    entries["rows"] = columns[:, 2]
                    entries["checksum"] = columns[:, 3]
                data_size = int(entries["length"].sum())
                tail = encode_index_and_footer(data_size, entries, self.num_subpartitions, schema)
                file.write(tail)
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        finally:
            self._subpartitions = {}
        return WrittenPartition(
            self.partition_id,
            str(self.path),
            self.num_subpartitions,
            entries["subpartition"].astype(np.int64),
            entries["length"].astype(np.int64),
            entries["rows"].astype(np.int64),
            data_size + len(tail),
            footer_checksum(tail),
        )

    def abort(self) -> None:
        """Drop what was written; no file appears."""
        self._done = True
        self._subpartitions = []

    def __enter__(self) -> ResultPartitionWriter:
        return self

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        if exc_type is not None and not self._done:
            self.abort()

    def _finished_streams(self, schema: pa.Schema):
        """(index, stream bytes) of each subpartition holding rows, in order; a few are
        compressed ahead on worker threads (Arrow releases the GIL) while the caller writes the
        earlier ones. Empty subpartitions cost nothing, which matters when a task writes a few
        rows into a thousand subpartitions."""
        full = sorted(self._subpartitions)
        if len(full) <= 1:
            for index in full:
                data = self._subpartitions[index].finish(schema)
                if data is not None:
                    yield index, data
            return
        with ThreadPoolExecutor(_THREADS, thread_name_prefix="tidal-partition-writer") as pool:
            ahead: deque[tuple[int, Future[pa.Buffer | None]]] = deque()
            upcoming = iter(full)
            for index in upcoming:
                ahead.append((index, pool.submit(self._subpartitions[index].finish, schema)))
                if len(ahead) >= 2 * _THREADS:
                    break
            while ahead:
                index, future = ahead.popleft()
                following = next(upcoming, None)
                if following is not None:
                    ahead.append(
                        (following, pool.submit(self._subpartitions[following].finish, schema))
                    )
                data = future.result()
                if data is not None:
                    yield index, data

    def _compress_all_pending(self) -> None:
        with ThreadPoolExecutor(_THREADS, thread_name_prefix="tidal-partition-writer") as pool:
            list(pool.map(lambda s: s.compress_pending(self.schema), self._subpartitions.values()))
        self._pending_bytes = 0

    def _check_open(self) -> None:
        if self._done:
            raise RuntimeError(
                f"the writer of partition {self.partition_id} is finished or aborted"
            )
