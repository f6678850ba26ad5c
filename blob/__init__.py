"""Tidal's blob store: content-addressed blobs, a bounded TaskManager-side cache, the codec."""

from blob.cache import DEFAULT_CACHE_BYTES, BlobCache, CacheStats
from blob.codec import DecodeError, decode, encode
from blob.errors import BlobCorrupted, BlobError, BlobNotFound
from blob.filesystem import FileSystemBlobStore
from blob.keys import BlobKey
from blob.memory import InMemoryBlobStore
from blob.store import BlobStore, verified

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
