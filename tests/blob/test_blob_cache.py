"""The TaskManager's blob cache: one fetch per key, a byte limit it never exceeds, LRU order."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blob import DEFAULT_CACHE_BYTES, BlobCache, BlobKey, BlobNotFound, InMemoryBlobStore


class CountingStore(InMemoryBlobStore):
    """An in-memory store that counts gets, and can hold them until released."""

    def __init__(self) -> None:
        super().__init__()
        self.gets: list[BlobKey] = []
        self.gate = threading.Event()
        self.gate.set()

    def get(self, key):
        self.gets.append(key)
        self.gate.wait(timeout=30)
        return super().get(key)


def _blob(store: InMemoryBlobStore, size: int, tag: int) -> BlobKey:
    return store.put(bytes([tag % 256]) * size + tag.to_bytes(4, "little"))


def test_the_default_limit_is_100_mib():
    assert BlobCache(InMemoryBlobStore()).max_bytes == DEFAULT_CACHE_BYTES == 100 * 2**20


def test_a_key_is_fetched_once_and_then_served_from_the_cache():
    store = CountingStore()
    key = _blob(store, 100, 1)
    cache = BlobCache(store, max_bytes=1000)
    assert cache.get(key) == cache.get(key) == store.get(key)
    assert store.gets.count(key) == 2  # the cache's one fetch, and the check above
    assert cache.stats().fetches == 1 and cache.stats().hits == 1


def test_concurrent_gets_of_one_key_share_one_fetch():
    store = CountingStore()
    key = _blob(store, 100, 1)
    cache = BlobCache(store)
    store.gate.clear()
    with ThreadPoolExecutor(8) as pool:
        results = [pool.submit(cache.get, key) for _ in range(8)]
        while not store.gets:
            threading.Event().wait(0.01)
        store.gate.set()
        values = {future.result(timeout=30) for future in results}
    assert len(values) == 1 and store.gets == [key]


def test_the_least_recently_used_blob_is_evicted_first():
    store = InMemoryBlobStore()
    first, second, third = (_blob(store, 396, tag) for tag in (1, 2, 3))  # 400 bytes each
    cache = BlobCache(store, max_bytes=1000)
    cache.get(first)
    cache.get(second)
    cache.get(first)  # now second is the least recently used
    cache.get(third)
    assert first in cache and third in cache and second not in cache
    assert cache.size_bytes == 800 and cache.stats().evictions == 1


def test_a_blob_larger_than_the_limit_is_returned_but_not_kept():
    store = InMemoryBlobStore()
    small, huge = _blob(store, 96, 1), _blob(store, 5000, 2)
    cache = BlobCache(store, max_bytes=1000)
    cache.get(small)
    assert len(cache.get(huge)) == 5004
    assert huge not in cache and small in cache and cache.size_bytes == 100


def test_dropped_blobs_are_forgotten():
    store = InMemoryBlobStore()
    keys = [_blob(store, 96, tag) for tag in range(3)]
    cache = BlobCache(store, max_bytes=10_000)
    for key in keys:
        cache.get(key)
    cache.drop([*keys[:2], BlobKey.of(b"unknown")])
    assert len(cache) == 1 and cache.size_bytes == 100 and keys[2] in cache


def test_a_blob_dropped_while_it_is_fetched_is_not_kept():
    store = CountingStore()
    key = _blob(store, 100, 7)
    cache = BlobCache(store)
    store.gate.clear()
    with ThreadPoolExecutor(1) as pool:
        fetch = pool.submit(cache.get, key)
        while not store.gets:
            threading.Event().wait(0.01)
        cache.drop([key])
        store.gate.set()
        assert len(fetch.result(timeout=30)) == 104
    assert key not in cache


def test_a_failed_fetch_is_not_cached_and_reaches_every_waiter():
    cache = BlobCache(InMemoryBlobStore())
    missing = BlobKey.of(b"gone")
    for _ in range(2):
        with pytest.raises(BlobNotFound):
            cache.get(missing)
    assert cache.stats().fetches == 2 and len(cache) == 0


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 3000),
    st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["get", "drop"])), max_size=60),
)
def test_the_cache_never_holds_more_than_its_limit(limit, operations):
    store = InMemoryBlobStore()
    keys = [_blob(store, 150 * tag, tag) for tag in range(10)]  # 4 to 1354 bytes
    cache = BlobCache(store, max_bytes=limit)
    model: list[BlobKey] = []  # least recently used first
    for tag, operation in operations:
        key = keys[tag]
        if operation == "drop":
            cache.drop([key])
            model = [k for k in model if k != key]
        else:
            assert cache.get(key) == store.get(key)
            model = [k for k in model if k != key]
            if len(store.get(key)) <= limit:
                model.append(key)
                while sum(len(store.get(k)) for k in model) > limit:
                    model.pop(0)
        assert cache.size_bytes <= limit
        assert cache.size_bytes == sum(len(store.get(k)) for k in model)
        assert all(k in cache for k in model) and len(cache) == len(model)
