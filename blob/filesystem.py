"""FileSystemBlobStore: blobs as files under a directory on a local disk or any fsspec URL.

A shared URL (an object store, NFS) lets one JobManager's puts serve TaskManagers on every
node, as Flink's blob server does through its distributed file system. Files live at
``<root>/<first two hex digits>/<digest>`` so no folder grows too large. A put writes a
temporary file under ``<root>/.incoming`` and then moves it into place: on a local disk that is
a rename, which is atomic; on an object store the move is a copy, and a single object upload is
itself atomic, so no reader ever sees half a blob. Writing the same bytes again is harmless.
"""

from __future__ import annotations

import contextlib
import os
import uuid

import fsspec

from blob.errors import BlobNotFound
from blob.keys import BlobKey
from blob.store import verified

__all__ = ["FileSystemBlobStore"]


class FileSystemBlobStore:
    """Blobs under ``url`` (a path, or e.g. ``"memory://blobs"``, ``"s3://bucket/tidal"``);
    ``storage_options`` go to fsspec."""

    def __init__(self, url: str | os.PathLike[str], **storage_options: object) -> None:
        self.url = str(url)
        self._fs, self._root = fsspec.core.url_to_fs(self.url, **storage_options)
        self._root = self._root.rstrip("/")
        self._fs.makedirs(self._incoming, exist_ok=True)

    @property
    def _incoming(self) -> str:
        return f"{self._root}/.incoming"

    def path_of(self, key: BlobKey) -> str:
        """Where the blob is, as the file system names it."""
        return f"{self._root}/{key.digest[:2]}/{key.digest}"

    def put(self, data: bytes) -> BlobKey:
        key = BlobKey.of(data)
        temporary = f"{self._incoming}/{uuid.uuid4().hex}"
        final = self.path_of(key)
        self._fs.makedirs(f"{self._root}/{key.digest[:2]}", exist_ok=True)
        self._fs.pipe_file(temporary, bytes(data))
        try:
            self._fs.mv(temporary, final)
        except BaseException:
            self._fs.rm_file(temporary)
            raise
        return key

    def get(self, key: BlobKey) -> bytes:
        path = self.path_of(key)
        try:
            data = self._fs.cat_file(path)
        except FileNotFoundError as error:
            raise BlobNotFound(key, self.url) from error
        return verified(key, data, f"{self.url} ({path})")

    def delete(self, key: BlobKey) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._fs.rm_file(self.path_of(key))

    def contains(self, key: BlobKey) -> bool:
        return self._fs.exists(self.path_of(key))
