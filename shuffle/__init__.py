"""Tidal's data plane: partitioning Arrow tables, partition files, ranges and input gates."""

from shuffle.ids import PartitionId
from shuffle.ranges import IndexRange, even_ranges

__all__ = ["IndexRange", "PartitionId", "even_ranges"]
