"""InMemoryBlobStore: a BlobStore in one process's memory, for tests and single-process runs."""

from __future__ import annotations

import threading

from blob.errors import BlobNotFound
from blob.keys import BlobKey
from blob.store import verified

__all__ = ["InMemoryBlobStore"]


class InMemoryBlobStore:
    """Thread-safe. Stores immutable copies, so a caller mutating its buffer changes nothing."""

    location = "memory"

    def __init__(self) -> None:
        self._blobs: dict[BlobKey, bytes] = {}
        self._lock = threading.Lock()

    def put(self, data: bytes) -> BlobKey:
        data = bytes(data)
        key = BlobKey.of(data)
        with self._lock:
            self._blobs[key] = data
        return key

    def get(self, key: BlobKey) -> bytes:
        with self._lock:
            data = self._blobs.get(key)
        if data is None:
            raise BlobNotFound(key, self.location)
        return verified(key, data, self.location)

    def delete(self, key: BlobKey) -> None:
        with self._lock:
            self._blobs.pop(key, None)

    def contains(self, key: BlobKey) -> bool:
        with self._lock:
            return key in self._blobs

    def __len__(self) -> int:
        with self._lock:
            return len(self._blobs)
