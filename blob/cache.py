"""BlobCache: a TaskManager's bounded, least-recently-used cache in front of a BlobStore.

Many tasks of one TaskManager consume the same partition group, so they ask for the same blob
of ShuffleDescriptors: the cache fetches each key from the store once, even when the tasks ask
at the same moment (the others wait for that one fetch). It holds at most ``max_bytes``
(Flink's default for this cache is 100 MiB), evicting the least recently used blobs first; a
blob larger than the whole limit is handed out but not kept. When the JobManager says the
partitions behind some blobs were released, :meth:`drop` forgets them, including a fetch still
in flight, whose result then is not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass

from blob.keys import BlobKey
from blob.store import BlobStore

__all__ = ["DEFAULT_CACHE_BYTES", "BlobCache", "CacheStats"]

DEFAULT_CACHE_BYTES = 100 << 20


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int
    fetches: int  # gets that went to the store
    evictions: int
    entries: int
    bytes: int


class BlobCache:
    """Thread-safe."""

    def __init__(self, store: BlobStore, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"a cache limit cannot be negative: {max_bytes}")
        self.store = store
        self.max_bytes = max_bytes
        self._entries: OrderedDict[BlobKey, bytes] = OrderedDict()
        self._bytes = 0
        self._fetching: dict[BlobKey, Future[bytes]] = {}
        self._dropped_while_fetching: set[BlobKey] = set()
        self._lock = threading.Lock()
        self._hits = self._fetches = self._evictions = 0

    def get(self, key: BlobKey) -> bytes:
        """The blob's bytes, from the cache or (once per key at a time) from the store."""
        with self._lock:
            data = self._entries.get(key)
            if data is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                return data
            fetch = self._fetching.get(key)
            fetching_here = fetch is None
            if fetching_here:
                fetch = self._fetching[key] = Future()
                self._fetches += 1
        if not fetching_here:
            return fetch.result()
        try:
            data = self.store.get(key)
        except BaseException as error:
            with self._lock:
                del self._fetching[key]
                self._dropped_while_fetching.discard(key)
            fetch.set_exception(error)
            raise
        with self._lock:
            del self._fetching[key]
            if key in self._dropped_while_fetching:
                self._dropped_while_fetching.discard(key)
            else:
                self._keep(key, data)
        fetch.set_result(data)
        return data

    def drop(self, keys: Iterable[BlobKey]) -> None:
        """Forget these blobs (their partitions were released)."""
        with self._lock:
            for key in keys:
                data = self._entries.pop(key, None)
                if data is not None:
                    self._bytes -= len(data)
                if key in self._fetching:
                    self._dropped_while_fetching.add(key)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def size_bytes(self) -> int:
        with self._lock:
            return self._bytes

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self._hits, self._fetches, self._evictions, len(self._entries), self._bytes
            )

    def _keep(self, key: BlobKey, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        while self._bytes + len(data) > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= len(evicted)
            self._evictions += 1
        self._entries[key] = data
        self._bytes += len(data)
