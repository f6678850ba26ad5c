"""Tidal's data plane: partitioning Arrow tables, partition files, ranges and input gates.

Names are imported on first use: the JobManager needs ids, ranges and descriptors, and should
not pay for loading Arrow to get them.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "DEFAULT_CHUNK_BYTES": "shuffle.server",
    "BroadcastPartitioner": "shuffle.partitioning",
    "ChecksumMismatch": "shuffle.errors",
    "FetchChunk": "shuffle.remote",
    "ForwardPartitioner": "shuffle.partitioning",
    "HashPartitioner": "shuffle.partitioning",
    "IndexRange": "shuffle.ranges",
    "InputGate": "shuffle.input_gate",
    "PartitionError": "shuffle.errors",
    "PartitionFileCorrupted": "shuffle.errors",
    "PartitionFileReader": "shuffle.reader",
    "PartitionFileTruncated": "shuffle.errors",
    "PartitionId": "shuffle.ids",
    "PartitionNotFound": "shuffle.errors",
    "PartitionServer": "shuffle.server",
    "PartitionUnreachable": "shuffle.errors",
    "PartitionedRows": "shuffle.partitioning",
    "RebalancePartitioner": "shuffle.partitioning",
    "RescalePartitioner": "shuffle.partitioning",
    "ResultPartitionWriter": "shuffle.writer",
    "RowPartitioner": "shuffle.partitioning",
    "ShuffleDescriptor": "shuffle.descriptors",
    "ShuffleDirectory": "shuffle.directory",
    "WrittenPartition": "shuffle.writer",
    "even_ranges": "shuffle.ranges",
    "fetch_range": "shuffle.remote",
    "hash_array": "shuffle.hashing",
    "hash_columns": "shuffle.hashing",
    "partition_path": "shuffle.paths",
    "partition_rows": "shuffle.partitioning",
    "read_range": "shuffle.reader",
    "reorder_by_subpartition": "shuffle.partitioning",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'shuffle' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
