"""A task's inputs: one table per source it reads, then one per input gate, in that order.

Sources read the splits this subtask is assigned (the same balanced assignment on every run);
a ``BroadcastSource`` is read whole by every subtask.
An input gate reads, for every slice of its deployment and every partition in the slice's
partition range, the slice's subpartition range, through :class:`shuffle.InputGate`: straight
from the file when the partition is on this node, through ``fetch_chunk`` when it is not.

Each input becomes one ``pyarrow.Table``, except that a PySpark task whose share of a Parquet
source is whole files gets those files (``ParquetFiles``), which Spark reads itself: the rows
then never pass through Python (local files only: Spark reads no object store without
Hadoop's connectors, so a source on one comes through Arrow). An input that read no rows still has its columns
(partition files carry their schema; a source reads the schema of its first split), so a user
function sees the columns it expects; only an input with nothing at all to read (no partitions,
or a source whose every file was pruned) is a table without columns.

The bytes read are the stored bytes of the splits and of the subpartition ranges (for a range
fetched from another node, with its small header).

A gate of a range-partitioned input (a global sort's) keeps only the rows of the task's key
range: the chunks it reads may straddle its bounds (``shuffle.range_partitioning``).

Any :class:`shuffle.PartitionError` while reading a gate becomes :class:`InputLost`: the
partition is gone, the producer must run again.
"""

from __future__ import annotations

import dataclasses
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Sequence
from contextlib import closing
from dataclasses import dataclass

import pyarrow as pa

from blob import BlobCache, BlobKey
from jobmanager.messages.codec import decode
from jobmanager.messages.deployment import (
    InputGateDeploymentDescriptor,
    TaskDeploymentDescriptor,
    decode_shuffle_descriptors,
)
from jobmanager.model import storage
from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.sources import FileSource
from jobmanager.model.splits import FileSplit, assign_splits
from shuffle import (
    FetchChunk,
    IndexRange,
    InputGate,
    PartitionError,
    ShuffleDescriptor,
)
from shuffle.range_partitioning import keep_key_range
from taskmanager.cancellation import CancelToken
from taskmanager.failures import InputLost
from taskmanager.memo import Memo
from taskmanager.timing import TaskClock

__all__ = [
    "ParquetFiles",
    "TaskInputs",
    "gate_reads",
    "parquet_schema_key",
    "read_gate",
    "read_inputs",
    "read_source",
]

Read = tuple[ShuffleDescriptor, IndexRange]


@dataclass(frozen=True, slots=True, eq=False)
class ParquetFiles:
    """Whole Parquet files, for Spark to read directly; ``columns`` None means all.
    ``schema_key`` names the files' common Parquet schema (None when they differ), so Spark
    need not infer a schema it has seen before."""

    paths: tuple[str, ...]
    columns: tuple[str, ...] | None
    num_rows: int
    schema_key: Hashable | None = None


@dataclass(frozen=True, slots=True, eq=False)
class TaskInputs:
    """The inputs in the operator's argument order, and what reading them cost (of which
    ``remote_bytes`` came from TaskManagers on other nodes, in ``ranges_read`` reads of
    partitions)."""

    tables: tuple[pa.Table | ParquetFiles, ...]
    bytes_read: int
    remote_bytes: int = 0
    ranges_read: int = 0  # (partition, subpartition range) reads of the input gates

    @property
    def rows(self) -> int:
        return sum(table.num_rows for table in self.tables)


def read_inputs(
    tdd: TaskDeploymentDescriptor,
    sources: Sequence[object],
    blobs: BlobCache,
    node_id: str,
    fetch_chunk: FetchChunk | None,
    cancel: CancelToken,
    memo: Memo | None = None,
    files_for_spark: bool = False,
    clock: TaskClock | None = None,
) -> TaskInputs:
    """``clock`` times fetching the shuffle descriptors as ``code`` and the reading as
    ``read_input``."""
    memo = memo or Memo(0)
    clock = clock or TaskClock()
    tables: list = []
    bytes_read = remote_bytes = ranges_read = 0
    for index, source in enumerate(sources):
        cancel.check(f"before reading {source!r}")
        with clock.phase("read_input"):
            table, size = _read_source_input(source, index, tdd, blobs, memo, files_for_spark)
        tables.append(table)
        bytes_read += size
    for gate in tdd.inputs:
        cancel.check(f"before reading input {gate.result!r}")
        shipped = gate.descriptors
        with clock.phase("code"):
            by_index = memo.get(
                ("descriptors", gate.result, shipped.group, shipped.version),
                lambda: {d.partition_id.index: d for d in _descriptors(gate, blobs)},
            )
        with clock.phase("read_input"):
            reads = gate_reads(gate, by_index)
            ranges_read += len(reads)
            table, size, remote = read_gate(reads, node_id, fetch_chunk)
            if gate.key_order:
                table = keep_key_range(table, gate.key_order, gate.lower_key, gate.upper_key)
        tables.append(table)
        bytes_read += size
        remote_bytes += remote
    return TaskInputs(tuple(tables), bytes_read, remote_bytes, ranges_read)


def _splits(
    source: object,
    index: int,
    tdd: TaskDeploymentDescriptor,
    blobs: BlobCache,
    memo: Memo,
    broadcast: bool = False,
) -> list | None:
    """The source's splits: those the JobManager listed, when it shipped them, else listed
    here (once per TaskManager). The vertex's dynamic filters are not a broadcast source's."""
    if not isinstance(source, FileSource):
        return None
    key = tdd.source_splits[index] if index < len(tdd.source_splits) else ""
    if key:
        return memo.get(("listed", key), lambda: list(decode(blobs.get(BlobKey(key)))))
    filters = () if broadcast else tdd.source_filters
    return memo.get(
        ("splits", source, tdd.split_target_bytes, filters),
        lambda: source.splits(tdd.split_target_bytes, filters),
    )


def _local_parquet(source: object, splits: list | None) -> bool:
    """A file source of local Parquet files (Spark reads those itself; anything else comes
    through Arrow) adding no partition columns."""
    if not isinstance(source, FileSource) or source.partitioning or not splits:
        return False
    return all(split.format == "parquet" and storage.is_local(split.path) for split in splits)


def _row_groups(splits: list) -> dict[str, set[int]]:
    groups: dict[str, set[int]] = {}
    for split in splits:
        groups.setdefault(split.path, set()).update(split.row_groups)
    return groups


def _read_source_input(
    source: object, index: int, tdd, blobs: BlobCache, memo: Memo, files_for_spark: bool
) -> tuple[object, int]:
    """This subtask's share of a source (all of a broadcast one) and its bytes: as whole
    Parquet files for Spark to read where it can take them, else a table read here."""
    whole = isinstance(source, BroadcastSource)
    source = source.source if whole else source
    splits = _splits(source, index, tdd, blobs, memo, whole)
    mine = _my_splits(splits, tdd, whole)
    files = whole_parquet_files(source, splits, mine) if files_for_spark else None
    if files is not None:
        return files
    return read_source(source, tdd, splits, mine)


def _my_splits(splits: list | None, tdd, whole: bool) -> list:
    if not splits:
        return []
    return splits if whole else assign_splits(splits, tdd.parallelism)[tdd.subtask]


def whole_parquet_files(
    source: object, splits: list | None, mine: list
) -> tuple[ParquetFiles, int] | None:
    """``mine``, this subtask's share of a Parquet source's ``splits``, as whole files, if that
    is what it is (and the source adds no partition columns, which Spark would type
    differently); else None."""
    if not _local_parquet(source, splits) or not mine:
        return None
    groups_of, held = _row_groups(splits), _row_groups(mine)
    if any(groups != groups_of[path] for path, groups in held.items()):
        return None
    columns = tuple(source.columns) if source.columns else None
    return _parquet_files(tuple(sorted(held)), columns), sum(split.length for split in mine)


def _parquet_files(paths: tuple[str, ...], columns: tuple | None) -> ParquetFiles:
    """The files with their rows, and their schema's key where they all share one."""
    import pyarrow.parquet as pq

    footers = [pq.read_metadata(path) for path in paths]
    keys = {parquet_schema_key(footer) for footer in footers}
    return ParquetFiles(
        paths,
        columns,
        sum(footer.num_rows for footer in footers),
        keys.pop() if len(keys) == 1 else None,
    )


def parquet_schema_key(footer) -> Hashable:
    """What Spark infers a Parquet file's schema from: its Parquet schema (physical and
    logical types, as Parquet prints it below the first line's object address) and its
    key-value metadata."""
    printed = str(footer.schema).partition("\n")[2]
    return printed, tuple(sorted((footer.metadata or {}).items()))


def read_source(
    source: object, tdd: TaskDeploymentDescriptor, splits: list | None, mine: list
) -> tuple[pa.Table, int]:
    """``mine``, this subtask's share of ``source``'s ``splits``, and their bytes."""
    if not isinstance(source, FileSource):
        raise TypeError(
            f"vertex {tdd.vertex!r}: source {source!r} is not a FileSource; a TaskManager "
            "reads FileSources only"
        )
    if not mine:
        return (_schema_of(source, splits[0]) if splits else pa.table({})), 0
    return source.read(mine), sum(split.length for split in mine)


def gate_reads(
    gate: InputGateDeploymentDescriptor, by_index: dict[int, ShuffleDescriptor]
) -> list[Read]:
    """(descriptor, subpartition range) for every slice and every partition in its range that
    holds data for it (all of them unless the deployment says which: then only those are
    looked at, so a consumer of a few of ten thousand producers does a few reads' work)."""
    with_data = gate.partitions  # sorted, or None
    reads = []
    for piece in gate.slices:
        span = piece.partitions
        if with_data is None:
            indices = range(span.start, span.end + 1)
        else:
            indices = with_data[
                bisect_left(with_data, span.start) : bisect_right(with_data, span.end)
            ]
        for index in indices:
            descriptor = by_index.get(index)
            if descriptor is None:
                raise ValueError(
                    f"input {gate.result!r}: slice {piece.partitions} names partition {index}, "
                    f"which is not among the {len(by_index)} shuffle descriptors shipped"
                )
            reads.append((descriptor, piece.subpartitions))
    return reads


def read_gate(
    reads: Sequence[Read], node_id: str, fetch_chunk: FetchChunk | None
) -> tuple[pa.Table, int, int]:
    """The rows of every read, concatenated, the bytes read from partition files, and how
    many of them came from other nodes."""
    counter = _CountingFetch(fetch_chunk) if fetch_chunk is not None else None
    gate = InputGate(reads, node_id, counter)
    try:
        with closing(iter(gate)) as tables_read:
            tables = list(tables_read)
    except PartitionError as error:
        raise InputLost(error) from error
    local_bytes = gate.local_bytes
    remote_bytes = counter.received if counter is not None else 0
    if not tables:
        return pa.table({}), 0, 0
    return (
        pa.concat_tables(tables, promote_options="default"),
        local_bytes + remote_bytes,
        remote_bytes,
    )


def _descriptors(gate: InputGateDeploymentDescriptor, blobs: BlobCache) -> list[ShuffleDescriptor]:
    shipped = gate.descriptors
    payload = blobs.get(BlobKey(shipped.blob_key)) if shipped.offloaded else shipped.inline
    return decode_shuffle_descriptors(payload)


def _schema_of(source: FileSource, split: FileSplit) -> pa.Table:
    """No rows, but the columns a split of ``source`` has: read no row groups (Parquet) or no
    bytes (CSV) of its first split."""
    return source.read([dataclasses.replace(split, start=0, length=0, row_groups=())])


class _CountingFetch:
    """A fetch_chunk that counts the bytes it received (the gate calls it from a few threads)."""

    def __init__(self, fetch_chunk: FetchChunk) -> None:
        self._fetch_chunk = fetch_chunk
        self._lock = threading.Lock()
        self.received = 0

    def __call__(self, descriptor, subpartitions, offset, max_bytes) -> bytes:
        chunk = self._fetch_chunk(descriptor, subpartitions, offset, max_bytes)
        with self._lock:
            self.received += len(chunk)
        return chunk
