"""What a source's path names: the entries a listing finds under it, and which of them a reader
reads (Spark's rule for hidden names, and the manifest of a committed result).

Connector code: it lists the file system; the pure scheduling core never imports it.
"""

from __future__ import annotations

import glob
import json
import posixpath
from typing import Any

__all__ = ["is_data_path", "is_published", "listing", "published_files"]


def listing(fs: Any, path: str) -> tuple[str | None, dict[str, dict]]:
    """The base directory (partition values and hidden names are read below it) and every entry
    under ``path``; no base when nothing is there. A glob's base is its fixed prefix, a
    directory is its own base, and a file's base is its folder."""
    if glob.has_magic(path):
        parts = path.split("/")
        base = "/".join(parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))]) or "/"
        matches = fs.glob(path, detail=True)
        expanded: dict[str, dict] = {}
        for name, info in matches.items():
            expanded |= (
                fs.find(name, detail=True) if info.get("type") == "directory" else {name: info}
            )
        return (base if matches else None), expanded
    if not fs.exists(path):
        return None, {}
    if fs.isdir(path):
        return path.rstrip("/") or "/", fs.find(path, detail=True)
    return posixpath.dirname(path), {path: fs.info(path)}


def published_files(fs: Any, infos: dict[str, dict]) -> dict[str, set[str]]:
    """Per directory holding a committed result's manifest (``_SUCCESS`` as JSON naming its
    files, relative to it, written by a Tidal sink commit, as Spark's S3A committers write it),
    the files it names: a reader of such a directory, and of its partition directories, reads
    exactly those, never a half-copied result or files of another attempt beside them
    (``jobmanager.runtime.sinks``)."""
    published = {}
    for name in infos:
        if posixpath.basename(name) != "_SUCCESS":
            continue
        try:
            manifest = json.loads(fs.cat_file(name))
        except (OSError, ValueError):
            continue  # an empty or plain marker: every file counts
        if isinstance(manifest, dict) and isinstance(manifest.get("files"), list):
            folder = posixpath.dirname(name)
            published[folder] = {f"{folder}/{file}" for file in manifest["files"]}
    return published


def is_published(name: str, published: dict[str, set[str]], base: str) -> bool:
    """Whether a reader reads ``name``: the nearest manifest in its folder or above it (up to
    the base; a partitioned result's manifest is at its root and names its files in the
    partition directories) names it, or no manifest is there."""
    folder = posixpath.dirname(name)
    while True:
        if folder in published:
            return name in published[folder]
        if folder in (base, "/", "") or not folder.startswith(base):
            return True
        folder = posixpath.dirname(folder)


def is_data_path(path: str, base: str) -> bool:
    """Spark's rule below the base: skip names starting with '.' or '_' (except partition
    directories such as ``_c=1``) and checksum files."""
    parts = posixpath.relpath(path, base).split("/")
    return not path.endswith(".crc") and all(
        not (part.startswith(".") or (part.startswith("_") and "=" not in part)) for part in parts
    )
