"""Typed errors of the data plane: a partition that cannot be read is *lost*, not a bug.

A consumer that cannot read its input must not be failed as if its own code were wrong: the
scheduler answers a :class:`PartitionError` by rerunning the producer of the partition it names
(Flink's "partition not found" / data-consumption error), so every error here carries the
:class:`~shuffle.ids.PartitionId` and where the partition was looked for.

::

    PartitionError                  the partition cannot be read; treat it as lost
    ├── PartitionNotFound           no file: released, deleted, or never written on this node
    ├── PartitionUnreachable        the TaskManager that holds it cannot be asked (node gone)
    └── PartitionFileCorrupted      the file is there but its bytes are not what was written
        ├── PartitionFileTruncated  cut short: no footer, or shorter than its index says
        └── ChecksumMismatch        a subpartition's (or the index's) checksum differs

The errors pickle with their fields, so they cross a Ray actor boundary intact. They are
``TidalError``s, in the one tree of ``jobmanager.errors``.
"""

from __future__ import annotations

from jobmanager.errors import TidalError
from shuffle.ids import PartitionId

__all__ = [
    "ChecksumMismatch",
    "PartitionError",
    "PartitionFileCorrupted",
    "PartitionFileTruncated",
    "PartitionNotFound",
    "PartitionUnreachable",
]


class PartitionError(TidalError):
    """A result partition cannot be read. ``location`` is the file path or the remote holder."""

    summary = "cannot read partition"

    def __init__(self, partition_id: PartitionId, location: str, detail: str = "") -> None:
        super().__init__(partition_id, location, detail)
        self.partition_id = partition_id
        self.location = location
        self.detail = detail

    def __reduce__(self):
        return (type(self), (self.partition_id, self.location, self.detail))

    def __str__(self) -> str:
        text = f"{self.summary} {self.partition_id} at {self.location}"
        return f"{text}: {self.detail}" if self.detail else text


class PartitionNotFound(PartitionError):
    summary = "no file for partition"


class PartitionUnreachable(PartitionError):
    summary = "cannot reach the holder of partition"


class PartitionFileCorrupted(PartitionError):
    summary = "corrupt file for partition"


class PartitionFileTruncated(PartitionFileCorrupted):
    summary = "truncated file for partition"


class ChecksumMismatch(PartitionFileCorrupted):
    summary = "checksum mismatch in partition"
