"""One contract, every backend: in memory, a local directory, an fsspec ``memory://`` URL."""

from __future__ import annotations

import os
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from blob import BlobCorrupted, BlobError, BlobKey, BlobNotFound, BlobStore, FileSystemBlobStore


def test_is_a_blob_store(backend):
    assert isinstance(backend.store, BlobStore)


def test_put_returns_the_content_hash_and_get_returns_the_bytes(backend):
    data = os.urandom(10_000)
    key = backend.store.put(data)
    assert key == BlobKey.of(data)
    assert backend.store.contains(key)
    assert backend.store.get(key) == data


def test_put_is_idempotent(backend):
    first = backend.store.put(b"descriptors")
    second = backend.store.put(b"descriptors")
    assert first == second and backend.store.get(first) == b"descriptors"


def test_empty_blobs_are_blobs(backend):
    key = backend.store.put(b"")
    assert backend.store.get(key) == b""


def test_a_put_copies_what_it_is_given(backend):
    data = bytearray(b"mutable")
    key = backend.store.put(data)
    data[0:1] = b"M"
    assert backend.store.get(key) == b"mutable"


def test_a_missing_blob_is_not_found_by_key(backend):
    key = BlobKey.of(b"never stored")
    assert not backend.store.contains(key)
    with pytest.raises(BlobNotFound) as caught:
        backend.store.get(key)
    assert caught.value.key == key and key.digest in str(caught.value)


def test_delete_removes_and_tolerates_a_missing_blob(backend):
    key = backend.store.put(b"to delete")
    backend.store.delete(key)
    backend.store.delete(key)
    assert not backend.store.contains(key)
    with pytest.raises(BlobNotFound):
        backend.store.get(key)


def test_corrupted_bytes_are_detected_on_get(backend):
    key = backend.store.put(b"the real descriptors")
    backend.overwrite_stored(key, b"the real descriptorz")
    with pytest.raises(BlobCorrupted, match="20 bytes hash to") as caught:
        backend.store.get(key)
    assert caught.value.key == key


def test_concurrent_puts_and_gets_agree(backend):
    blobs = [os.urandom(2000 + i) for i in range(40)]
    with ThreadPoolExecutor(8) as pool:
        keys = list(pool.map(backend.store.put, blobs * 2))
        got = list(pool.map(backend.store.get, keys))
    assert got == blobs * 2


def test_errors_pickle_with_their_fields():
    key = BlobKey.of(b"x")
    for error_type in (BlobNotFound, BlobCorrupted):
        error = pickle.loads(pickle.dumps(error_type(key, "s3://bucket", "detail")))
        assert isinstance(error, BlobError) and type(error) is error_type
        assert (error.key, error.location, error.detail) == (key, "s3://bucket", "detail")


def test_filesystem_writes_leave_no_temporary_files(tmp_path):
    store = FileSystemBlobStore(tmp_path)
    for index in range(5):
        store.put(bytes([index]) * 100)
    assert list((tmp_path / ".incoming").iterdir()) == []
    assert sum(1 for path in tmp_path.rglob("*") if path.is_file()) == 5
