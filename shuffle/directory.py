"""A TaskManager's shuffle directory: where its partition files live, and their cleanup.

Each partition has one fixed path, derived from its id, so a reader, the partition server and
the release path all agree on it without a registry. Releasing a partition deletes its file;
closing the directory (the TaskManager shutting down) removes the whole tree, including the
temporary files of writes that never finished.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

import structlog

from shuffle.ids import PartitionId
from shuffle.partitioning import RowPartitioner
from shuffle.writer import ResultPartitionWriter

__all__ = ["ShuffleDirectory"]

_log = structlog.get_logger(__name__)
_SUFFIX = ".tpf"
_MAX_NAME = 200


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

    def path_for(self, partition_id: PartitionId) -> Path:
        """``root/<result id, %-quoted>/<index>.tpf``: one folder per intermediate result.

        Folders stay after their files are released (a writer of the same result may be about
        to use one); :meth:`close` removes them."""
        return self.root / _folder_name(partition_id.result) / f"{partition_id.index}{_SUFFIX}"

    def writer(
        self,
        partition_id: PartitionId,
        num_subpartitions: int,
        partitioner: RowPartitioner,
        **options,
    ) -> ResultPartitionWriter:
        """A writer whose file lands at :meth:`path_for`; ``options`` go to the writer."""
        self._check_open()
        return ResultPartitionWriter(
            self.path_for(partition_id), partition_id, num_subpartitions, partitioner, **options
        )

    def contains(self, partition_id: PartitionId) -> bool:
        return self.path_for(partition_id).is_file()

    def release(self, partition_ids: Iterable[PartitionId]) -> list[PartitionId]:
        """Delete the files of these partitions; return those that existed."""
        released = []
        for partition_id in partition_ids:
            path = self.path_for(partition_id)
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            released.append(partition_id)
        if released:
            _log.debug("partitions released", count=len(released), root=str(self.root))
        return released

    def close(self) -> None:
        """Remove the directory and everything in it. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        shutil.rmtree(self.root, ignore_errors=True)
        _log.debug("shuffle directory removed", root=str(self.root))

    def __enter__(self) -> ShuffleDirectory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"shuffle directory {self.root} is closed")


def _folder_name(result: str) -> str:
    """The result id made safe as one file name; long ids keep a prefix and a digest."""
    name = quote(result, safe="").replace(".", "%2E") or "%"
    if len(name) <= _MAX_NAME:
        return name
    return f"{name[: _MAX_NAME - 17]}-{hashlib.sha256(result.encode()).hexdigest()[:16]}"
