"""A TaskManager's scratch folder, and the sweep that removes the folders of TaskManagers gone.

A TaskManager keeps its Spark's temporary files (shuffle blocks, broadcast pieces) in its
scratch folder, ``<base>/<cluster>/<task manager>``, for as long as it lives. The
ResourceManager removes the folder when it stops an idle TaskManager; but a TaskManager that
ends with its cluster (Ray's shutdown kills its process) or is killed leaves it behind, tens to
hundreds of MB each. So a folder names its owner (host and pid), and a TaskManager starting
removes, under its base, the folders of this host whose owner is no longer running, as Spark's
standalone Worker removes the folders of applications that have finished. A folder of another
host (a base shared between machines), of a process still running, or naming no owner is left
alone.
"""

from __future__ import annotations

import os
import shutil
import socket
import uuid
from pathlib import Path

import structlog

__all__ = ["claim", "sweep_abandoned"]

OWNER_FILE = ".owner"
_log = structlog.get_logger("tidal.taskmanager.scratch")


def claim(folder: str | os.PathLike) -> None:
    """Create ``folder`` and name this process its owner."""
    folder = Path(folder)
    for attempt in range(3):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            break
        except FileNotFoundError:  # a sweep removed its cluster's folder, empty until now
            if attempt == 2:
                raise
    (folder / OWNER_FILE).write_text(f"{socket.gethostname()} {os.getpid()}\n")


def sweep_abandoned(base: str | os.PathLike) -> list[Path]:
    """Remove every ``<base>/<cluster>/<task manager>`` folder whose owner, on this host, has
    exited, and every cluster folder left empty; answer the folders removed."""
    base = Path(base)
    for aside in base.glob(".swept-*"):  # a sweep that was itself cut short
        shutil.rmtree(aside, ignore_errors=True)
    removed = []
    for cluster in _subfolders(base):
        for folder in _subfolders(cluster):
            if _abandoned(folder):
                _remove(folder)
                removed.append(folder)
        try:
            cluster.rmdir()  # only when empty: a cluster still running keeps its folder
        except OSError:
            pass
    if removed:
        _log.info("scratch of ended task managers removed", base=str(base), folders=len(removed))
    return removed


def _subfolders(folder: Path) -> list[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:  # gone meanwhile, or never there
        return []
    return [Path(entry.path) for entry in entries
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")]  # fmt: skip


def _abandoned(folder: Path) -> bool:
    try:
        host, pid = (folder / OWNER_FILE).read_text().split()
        pid = int(pid)
    except (OSError, ValueError):  # no owner named (yet, or by an older Tidal): not ours to judge
        return False
    return host == socket.gethostname() and pid != os.getpid() and not _running(pid)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove(folder: Path) -> None:
    """Renamed aside first, so the folder's name is free at once and a half-removed tree is
    never taken for a TaskManager's."""
    aside = folder.parent.parent / f".swept-{uuid.uuid4().hex}"
    try:
        os.rename(folder, aside)
    except OSError:
        aside = folder
    shutil.rmtree(aside, ignore_errors=True)
