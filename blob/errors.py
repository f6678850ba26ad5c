"""Typed errors of the blob store.

::

    BlobError               a blob cannot be had
    ├── BlobNotFound        no blob under this key (never put, or deleted)
    └── BlobCorrupted       the stored bytes do not hash to their key

They pickle with their fields, so they cross a Ray actor boundary intact. They are
``TidalError``s, in the one tree of ``jobmanager.errors``.
"""

from __future__ import annotations

from blob.keys import BlobKey
from jobmanager.errors import TidalError

__all__ = ["BlobCorrupted", "BlobError", "BlobNotFound"]


class BlobError(TidalError):
    summary = "cannot get blob"

    def __init__(self, key: BlobKey, location: str, detail: str = "") -> None:
        super().__init__(key, location, detail)
        self.key = key
        self.location = location
        self.detail = detail

    def __reduce__(self):
        return (type(self), (self.key, self.location, self.detail))

    def __str__(self) -> str:
        text = f"{self.summary} {self.key} in {self.location}"
        return f"{text}: {self.detail}" if self.detail else text


class BlobNotFound(BlobError):
    summary = "no blob"


class BlobCorrupted(BlobError):
    summary = "corrupt blob"
