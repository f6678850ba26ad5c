"""PartitionRegistry: the partition files this TaskManager wrote, the only files it serves.

A consumer on another node names a partition by id; the TaskManager serves the file of the
latest attempt it wrote for that id, never a path the caller supplies, so a remote caller can
read finished partition files and nothing else. Releasing an attempt forgets it only while it is
still the registered one: the newer file of a rerun stays served.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from shuffle import PartitionId, PartitionNotFound

__all__ = ["PartitionRegistry"]


class PartitionRegistry:
    """Partition id -> (attempt, path) of the latest attempt written here. Thread-safe; a
    ``PartitionLocator`` for :class:`shuffle.PartitionServer`."""

    def __init__(self, task_manager_id: str) -> None:
        self.task_manager_id = task_manager_id
        self._files: dict[PartitionId, tuple[int, Path]] = {}
        self._lock = threading.Lock()

    def add(self, partition_id: PartitionId, attempt: int, path: str | Path) -> None:
        """Serve ``path`` for ``partition_id`` unless a later attempt is already registered."""
        with self._lock:
            current = self._files.get(partition_id)
            if current is None or current[0] <= attempt:
                self._files[partition_id] = (attempt, Path(path))

    def path_for(self, partition_id: PartitionId) -> Path:
        with self._lock:
            entry = self._files.get(partition_id)
        if entry is None:
            raise PartitionNotFound(
                partition_id,
                f"task manager {self.task_manager_id}",
                "not written here, or already released",
            )
        return entry[1]

    def forget(
        self, partition_ids: Iterable[PartitionId], attempts: Iterable[int]
    ) -> list[PartitionId]:
        """Stop serving these producer attempts; return the partitions that were forgotten."""
        forgotten = []
        with self._lock:
            for partition_id, attempt in zip(partition_ids, attempts, strict=True):
                entry = self._files.get(partition_id)
                if entry is not None and entry[0] == attempt:
                    del self._files[partition_id]
                    forgotten.append(partition_id)
        return forgotten

    def held(self) -> list[tuple[PartitionId, int]]:
        """Every partition served here, with the attempt that wrote it."""
        with self._lock:
            return [(pid, attempt) for pid, (attempt, _) in self._files.items()]

    def __contains__(self, partition_id: object) -> bool:
        with self._lock:
            return partition_id in self._files

    def __len__(self) -> int:
        with self._lock:
            return len(self._files)
