"""One file-system layer for what a job reads and writes outside its shuffle: sources, sinks
and the job store. It is fsspec.

fsspec because it speaks every scheme a user names (``s3://``, ``gs://``, ``abfs://``,
``hdfs://``, ``file://``, ``memory://``, plain paths) through one interface, each with the
credentials its own library finds where users keep them (the environment, ``~/.aws``, gcloud's
files, a Hadoop config); Tidal's options never carry any. Arrow reads Parquet from fsspec's
file objects (by range requests on an object store), and a local path is read by Arrow
directly, without a copy. ``pyarrow.fs`` alone knows fewer schemes (no ``abfs``, no
``memory``), and what it knows it reaches through the same libraries underneath.

The shuffle is not here: partition files stay on each TaskManager's local disk and are served
by range (``shuffle``).
"""

from __future__ import annotations

import os
from typing import Any

import fsspec

__all__ = ["filesystem", "is_local", "join"]


def filesystem(url: str) -> tuple[Any, str]:
    """The file system of ``url`` and the path on it."""
    return fsspec.core.url_to_fs(url)


def is_local(url: str) -> bool:
    """A path on this machine's file system (also ``file://``)."""
    return "://" not in url or url.startswith("file://")


def join(url: str, *parts: str) -> str:
    return "/".join([url.rstrip("/"), *parts]) if "://" in url else os.path.join(url, *parts)
