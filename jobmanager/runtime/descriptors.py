"""The ShuffleDescriptors of each consumed partition group, encoded, compressed and cached once
per group, and offloaded to the blob store above ``blob.offload.minsize``.

Every consumer of an all-to-all group reads the same N partitions, so their N descriptors are
built once and shared: deploying N consumers costs O(N), not O(N^2) (Flink 1.14, FLINK-23005).
Writing and deleting blobs is an effect, so the cache lives in the shell; the core's
``TaskDeploymentDescriptorFactory`` only asks it for a group's entry. An entry is stale once its
group's version moved on (a partition reset, released or lost), and is dropped with its blob.
"""

from __future__ import annotations

from typing import Callable

from blob import BlobKey, BlobStore
from blob.codec import encode
from jobmanager.core.executiongraph import (
    ConsumedPartitionGroup,
    IntermediateResultPartition,
)
from jobmanager.messages.deployment import ShuffleDescriptors
from shuffle.descriptors import ShuffleDescriptor

__all__ = ["DEFAULT_OFFLOAD_MIN_SIZE", "ShuffleDescriptorCache"]

DEFAULT_OFFLOAD_MIN_SIZE = 1 << 20


class ShuffleDescriptorCache:
    """Encoded, compressed descriptors per consumed partition group, offloaded when large."""

    def __init__(self, blobs: BlobStore, offload_min_size: int = DEFAULT_OFFLOAD_MIN_SIZE) -> None:
        self.blobs = blobs
        self.offload_min_size = offload_min_size
        self._entries: dict[int, ShuffleDescriptors] = {}
        self.builds = 0

    def get(
        self,
        group: ConsumedPartitionGroup,
        describe: Callable[[IntermediateResultPartition], ShuffleDescriptor],
    ) -> ShuffleDescriptors:
        entry = self._entries.get(group.id)
        if entry is not None and entry.version == group.version:
            return entry
        if entry is not None:
            self._drop(entry)
        payload = encode([describe(p).to_list() for p in group.partitions])
        self.builds += 1
        if len(payload) >= self.offload_min_size:
            entry = ShuffleDescriptors(
                group.id, group.version, blob_key=self.blobs.put(payload).digest
            )
        else:
            entry = ShuffleDescriptors(group.id, group.version, inline=payload)
        self._entries[group.id] = entry
        return entry

    def drop(self, group_ids) -> list[str]:
        """Forget these groups' entries; return the blob keys that were deleted."""
        keys = []
        for group_id in group_ids:
            entry = self._entries.pop(group_id, None)
            if entry is not None and self._drop(entry):
                keys.append(entry.blob_key)
        return keys

    def _drop(self, entry: ShuffleDescriptors) -> bool:
        if entry.offloaded:
            self.blobs.delete(BlobKey(entry.blob_key))
            return True
        return False

    def __len__(self) -> int:
        return len(self._entries)
