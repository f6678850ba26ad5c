"""A task's outputs: its operator's table, split and written once per result partition.

Each outgoing edge has its own partitioner; the table is partitioned into the subpartitions
the JobManager asked for (the consumer's max parallelism, or 1 for broadcast) and written as
one partition file per result, at the attempt's own path, then registered so the TaskManager
serves it to consumers on other nodes. What is reported per result is the bytes of each
subpartition as stored, which the adaptive scheduler decides the consumer's parallelism from,
and, on an edge with dynamic filtering, the distinct values of the filtering column. A range
edge's output is sorted by its keys and cut into chunks of about equal rows, one per
subpartition, and the report carries each chunk's lowest key and the highest of all
(``shuffle.range_partitioning``), which the consumer's key ranges are decided from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc

from jobmanager.errors import MissingColumnError
from jobmanager.messages.deployment import (
    ResultPartitionDeploymentDescriptor,
    TaskDeploymentDescriptor,
)
from jobmanager.messages.events import ProducedPartition
from shuffle import (
    BroadcastPartitioner,
    ForwardPartitioner,
    HashPartitioner,
    PartitionId,
    RebalancePartitioner,
    RowPartitioner,
    ShuffleDirectory,
)
from shuffle.range_partitioning import sort_into_chunks
from taskmanager.cancellation import CancelToken
from taskmanager.registry import PartitionRegistry

__all__ = ["discard_outputs", "filter_values", "partitioner_for", "write_outputs"]


def partitioner_for(output: ResultPartitionDeploymentDescriptor, subtask: int) -> RowPartitioner:
    """The row partitioner of one output. Round robin starts at the producer's subtask index,
    so small outputs of many producers do not all land in subpartition 0."""
    kind = output.partitioner
    if kind == "hash":
        return HashPartitioner(tuple(output.keys))
    if kind in ("rebalance", "rescale"):
        return RebalancePartitioner(offset=subtask)
    if kind == "forward":
        if output.num_subpartitions == 1:
            return ForwardPartitioner()
        return RebalancePartitioner(offset=subtask)
    if kind == "broadcast":
        return BroadcastPartitioner()
    raise ValueError(
        f"result {output.result!r}: unknown partitioner {kind!r}; expected hash, rebalance, "
        "rescale, forward or broadcast"
    )


def write_outputs(
    table: pa.Table,
    tdd: TaskDeploymentDescriptor,
    shuffle: ShuffleDirectory,
    registry: PartitionRegistry,
    cancel: CancelToken,
) -> tuple[ProducedPartition, ...]:
    """Write ``table`` to every output of the task; register each file as it is finished."""
    produced = []
    for output in tdd.outputs:
        cancel.check(f"before writing result {output.result!r}")
        _check_columns(table, output, tdd.vertex)
        partition_id = PartitionId(output.result, output.index)
        rows, partitioner, bounds = table, None, ()
        if output.partitioner == "range":
            chunks = sort_into_chunks(table, output.order, output.num_subpartitions)
            rows, partitioner, bounds = chunks.table, chunks.partitioner(), chunks.bounds
        with shuffle.writer(
            partition_id,
            output.num_subpartitions,
            partitioner or partitioner_for(output, tdd.subtask),
            attempt=tdd.attempt,
        ) as writer:
            writer.write(rows)
            written = writer.finish()
        registry.add(partition_id, tdd.attempt, written.path)
        values = filter_values(table, output.filter_column) if output.filter_column else ()
        report = ProducedPartition.of_written(
            output.result,
            written.num_subpartitions,
            written.written,
            written.lengths,
            output.breakdown,
            values,
        )
        report = replace(
            report, range_bounds=bounds, file_size=written.file_size, file_checksum=written.checksum
        )
        produced.append(report)
    return tuple(produced)


def discard_outputs(
    tdd: TaskDeploymentDescriptor, shuffle: ShuffleDirectory, registry: PartitionRegistry
) -> None:
    """Delete and forget whatever this attempt wrote: it failed or was cancelled, so no one
    will be told its partitions exist."""
    ids = [PartitionId(output.result, output.index) for output in tdd.outputs]
    registry.forget(ids, [tdd.attempt] * len(ids))
    shuffle.release(ids, [tdd.attempt] * len(ids))


def filter_values(table: pa.Table, column: str) -> tuple[str, ...]:
    """The distinct non-null values of ``column``, as strings (as hive partition directories
    spell them), sorted."""
    distinct = pc.unique(table.column(column).combine_chunks())
    return tuple(sorted(str(v) for v in distinct.cast(pa.string()).to_pylist() if v is not None))


def _check_columns(
    table: pa.Table, output: ResultPartitionDeploymentDescriptor, vertex: str
) -> None:
    needed: Iterable[str] = (
        *output.keys,
        *(key.column for key in output.order),
        *((output.filter_column,) if output.filter_column else ()),
    )
    missing = [name for name in needed if name not in table.column_names]
    if missing:
        raise MissingColumnError(
            f"vertex {vertex!r}, result {output.result!r}: its output has no column "
            f"{', '.join(map(repr, missing))} (columns: {table.column_names})"
        )
