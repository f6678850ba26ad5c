"""A TaskManager's shuffle directory: where its partition files live, and their cleanup.

Each producer attempt of a partition has one fixed path, derived from its id and attempt
(``partition_path``), so the JobManager's descriptors, local readers and the release path agree
on it without asking each other. Releasing a partition deletes its file;
closing the directory (the TaskManager shutting down) removes the whole tree, including the
temporary files of writes that never finished.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
import tempfile
from collections.abc import Iterable
from pathlib import Path

import structlog

from shuffle.ids import PartitionId
from shuffle.paths import partition_path
from shuffle.partitioning import RowPartitioner
from shuffle.writer import ResultPartitionWriter

__all__ = ["ShuffleDirectory", "partition_path"]

_log = structlog.get_logger(__name__)


class ShuffleDirectory:
    """The directory ``root`` (created if missing) holding one TaskManager's partition files."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._closed = False

    @classmethod
    def temporary(cls, parent: str | os.PathLike[str] | None = None) -> ShuffleDirectory:
        """A fresh directory under ``parent`` (default: the system temp dir)."""
        return cls(tempfile.mkdtemp(prefix="tidal-shuffle-", dir=parent))

    @property
    def closed(self) -> bool:
        return self._closed

    def path_for(self, partition_id: PartitionId, attempt: int = 0) -> Path:
        """See :func:`partition_path`. Folders stay after their files are released (a writer
        of the same result may be about to use one); :meth:`close` removes them."""
        return Path(partition_path(str(self.root), partition_id, attempt))

    def writer(
        self,
        partition_id: PartitionId,
        num_subpartitions: int,
        partitioner: RowPartitioner,
        attempt: int = 0,
        **options,
    ) -> ResultPartitionWriter:
        """A writer whose file lands at :meth:`path_for`; ``options`` go to the writer."""
        self._check_open()
        return ResultPartitionWriter(
            self.path_for(partition_id, attempt),
            partition_id,
            num_subpartitions,
            partitioner,
            **options,
        )

    def contains(self, partition_id: PartitionId, attempt: int = 0) -> bool:
        return self.path_for(partition_id, attempt).is_file()

    def release(
        self, partition_ids: Iterable[PartitionId], attempts: Iterable[int] | None = None
    ) -> list[PartitionId]:
        """Delete the files these producer attempts wrote (attempt 0 unless given); return the
        partitions whose file existed. A newer attempt's file is never touched."""
        released = []
        attempts = attempts if attempts is not None else (0 for _ in iter(int, 1))
        for partition_id, attempt in zip(partition_ids, attempts):
            path = self.path_for(partition_id, attempt)
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            released.append(partition_id)
        if released:
            _log.debug("partitions released", count=len(released), root=str(self.root))
        return released

    def close(self) -> None:
        """Remove the directory and everything in it. Safe to call twice. The tree is renamed
        aside at once and deleted in the background: a job's thousands of partition files need
        not hold up the TaskManager that is leaving it."""
        if self._closed:
            return
        self._closed = True
        doomed = self.root.with_name(f".{self.root.name}.removed-{uuid.uuid4().hex}")
        try:
            os.rename(self.root, doomed)
        except OSError:
            doomed = self.root
        threading.Thread(target=shutil.rmtree, args=(doomed, True), daemon=True).start()
        _log.debug("shuffle directory removed", root=str(self.root))

    def __enter__(self) -> ShuffleDirectory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"shuffle directory {self.root} is closed")
