"""Tidal's data plane: partitioning Arrow tables, partition files, ranges and input gates."""

from shuffle.descriptors import ShuffleDescriptor
from shuffle.directory import ShuffleDirectory
from shuffle.errors import (
    ChecksumMismatch,
    PartitionError,
    PartitionFileCorrupted,
    PartitionFileTruncated,
    PartitionNotFound,
    PartitionUnreachable,
)
from shuffle.hashing import hash_array, hash_columns
from shuffle.ids import PartitionId
from shuffle.input_gate import InputGate
from shuffle.partitioning import (
    BroadcastPartitioner,
    ForwardPartitioner,
    HashPartitioner,
    PartitionedRows,
    RebalancePartitioner,
    RescalePartitioner,
    RowPartitioner,
    partition_rows,
    reorder_by_subpartition,
)
from shuffle.ranges import IndexRange, even_ranges
from shuffle.reader import PartitionFileReader, read_range
from shuffle.remote import FetchChunk, fetch_range
from shuffle.server import DEFAULT_CHUNK_BYTES, PartitionServer
from shuffle.writer import ResultPartitionWriter, WrittenPartition

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "BroadcastPartitioner",
    "ChecksumMismatch",
    "FetchChunk",
    "ForwardPartitioner",
    "HashPartitioner",
    "IndexRange",
    "InputGate",
    "PartitionError",
    "PartitionFileCorrupted",
    "PartitionFileReader",
    "PartitionFileTruncated",
    "PartitionId",
    "PartitionNotFound",
    "PartitionServer",
    "PartitionUnreachable",
    "PartitionedRows",
    "RebalancePartitioner",
    "RescalePartitioner",
    "ResultPartitionWriter",
    "RowPartitioner",
    "ShuffleDescriptor",
    "ShuffleDirectory",
    "WrittenPartition",
    "even_ranges",
    "fetch_range",
    "hash_array",
    "hash_columns",
    "partition_rows",
    "read_range",
    "reorder_by_subpartition",
]
