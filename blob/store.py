"""The BlobStore protocol: a content-addressed store of immutable byte strings.

The JobManager puts large serialised ShuffleDescriptors here and ships only the key; the
TaskManagers get them (through a :class:`~blob.cache.BlobCache`). Every backend checks on
``get`` that the bytes still hash to their key, so a corrupted blob is an error that says so,
never wrong data. ``put`` of bytes already stored is harmless; ``delete`` of a missing key too.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from blob.errors import BlobCorrupted
from blob.keys import BlobKey

__all__ = ["BlobStore", "verified"]


@runtime_checkable
class BlobStore(Protocol):
    def put(self, data: bytes) -> BlobKey:
        """Store ``data``; the key is its SHA-256. Atomic: a reader sees all of it or nothing."""
        ...

    def get(self, key: BlobKey) -> bytes:
        """The blob's bytes; raises BlobNotFound or BlobCorrupted."""
        ...

    def delete(self, key: BlobKey) -> None:
        """Remove the blob, if it is there."""
        ...

    def contains(self, key: BlobKey) -> bool: ...


def verified(key: BlobKey, data: bytes, location: str) -> bytes:
    """``data`` if it hashes to ``key``; else BlobCorrupted."""
    if not key.matches(data):
        raise BlobCorrupted(key, location, f"{len(data)} bytes hash to {BlobKey.of(data)}")
    return data
