"""Tidal's blob store: content-addressed blobs, a bounded TaskManager-side cache, the codec.

Names are imported on first use: the messages and the pure scheduling core read ``blob.codec``
and ``blob.keys``, and importing them runs this file first, which must not load the file-system
store (fsspec) or the cache (threads) for them.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "DEFAULT_CACHE_BYTES": "blob.cache",
    "BlobCache": "blob.cache",
    "CacheStats": "blob.cache",
    "DecodeError": "blob.codec",
    "decode": "blob.codec",
    "encode": "blob.codec",
    "BlobCorrupted": "blob.errors",
    "BlobError": "blob.errors",
    "BlobNotFound": "blob.errors",
    "FileSystemBlobStore": "blob.filesystem",
    "BlobKey": "blob.keys",
    "InMemoryBlobStore": "blob.memory",
    "BlobStore": "blob.store",
    "verified": "blob.store",
}

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "BlobCache",
    "BlobCorrupted",
    "BlobError",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "CacheStats",
    "DecodeError",
    "FileSystemBlobStore",
    "InMemoryBlobStore",
    "decode",
    "encode",
    "verified",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'blob' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
