"""Where a producer attempt's partition file lives: a pure function, shared by the TaskManager
that writes the file and the JobManager that tells consumers where to read it (without loading
Arrow to do so). Joined by ``posixpath``, the text half of ``os.path`` on the POSIX nodes Tidal
runs on, since the pure scheduling core computes it and may load nothing that reaches a file
system."""

from __future__ import annotations

import hashlib
import posixpath
from urllib.parse import quote

from shuffle.ids import PartitionId

__all__ = ["partition_path"]

_SUFFIX = ".tpf"
_MAX_NAME = 200


def partition_path(root: str, partition_id: PartitionId, attempt: int = 0) -> str:
    """``root/<result id, %-quoted>/<index>-<attempt>.tpf``: one folder per intermediate
    result, one file per producer attempt, so a rerun never writes over a file that a late
    release of the previous attempt would delete. A pure function of its arguments: the
    JobManager derives the same path for a ShuffleDescriptor without asking."""
    name = f"{partition_id.index}-{attempt}{_SUFFIX}"
    return posixpath.join(root, _folder_name(partition_id.result), name)


def _folder_name(result: str) -> str:
    """The result id made safe as one file name; long ids keep a prefix and a digest."""
    name = quote(result, safe="").replace(".", "%2E") or "%"
    if len(name) <= _MAX_NAME:
        return name
    return f"{name[: _MAX_NAME - 17]}-{hashlib.sha256(result.encode()).hexdigest()[:16]}"
