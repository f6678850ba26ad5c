"""ShuffleDescriptor: where one result partition lives, as a consumer needs to know it.

The JobManager builds one per finished partition and ships the descriptors of a consumed
partition group to every consumer of the group (encoded once, cached; FLINK-23005). They are
values: frozen, comparable, and encodable as a plain list so msgpack packs 10,000 of them into
a compact array of arrays instead of 10,000 maps repeating the field names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shuffle.ids import PartitionId

__all__ = ["ShuffleDescriptor"]


@dataclass(frozen=True, slots=True)
class ShuffleDescriptor:
    """One result partition: its id, the TaskManager that wrote it and its node, the partition
    file's path on that node, how many subpartitions the file holds, and the file's size and
    fingerprint as its producer finished it (0: not known; see ``shuffle.survey``)."""

    partition_id: PartitionId
    task_manager_id: str
    node_id: str
    path: str
    num_subpartitions: int
    size: int = 0
    checksum: int = 0

    def __post_init__(self) -> None:
        if self.num_subpartitions < 1:
            raise ValueError(
                f"partition {self.partition_id} must have at least one subpartition, "
                f"not {self.num_subpartitions}"
            )

    def is_local_to(self, node_id: str) -> bool:
        """Whether a consumer on ``node_id`` can open the file directly."""
        return self.node_id == node_id

    def to_list(self) -> list[str | int]:
        """The fields as a flat list: ``[result, index, task_manager_id, node_id, path,
        num_subpartitions, size, checksum]``."""
        return [
            self.partition_id.result,
            self.partition_id.index,
            self.task_manager_id,
            self.node_id,
            self.path,
            self.num_subpartitions,
            self.size,
            self.checksum,
        ]

    @classmethod
    def from_list(cls, fields: Sequence[str | int]) -> ShuffleDescriptor:
        """The inverse of :meth:`to_list`; rejects a list of the wrong shape by name."""
        if len(fields) != 8:
            raise ValueError(f"a shuffle descriptor has 8 fields, got {len(fields)}: {fields!r}")
        result, index, task_manager_id, node_id, path, num_subpartitions, size, checksum = fields
        if not all(isinstance(n, int) for n in (index, num_subpartitions, size, checksum)):
            raise ValueError(
                f"shuffle descriptor index, subpartition count, size and checksum must be "
                f"ints: {fields!r}"
            )
        return cls(
            PartitionId(str(result), index),
            str(task_manager_id),
            str(node_id),
            str(path),
            num_subpartitions,
            size,
            checksum,
        )
