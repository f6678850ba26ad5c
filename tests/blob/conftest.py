"""Every blob backend, behind one fixture, for the contract tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import fsspec
import pytest

from blob import BlobKey, BlobStore, FileSystemBlobStore, InMemoryBlobStore


@dataclass
class Backend:
    """A store, and how to damage a stored blob behind its back (to test integrity checks)."""

    store: BlobStore
    overwrite_stored: Callable[[BlobKey, bytes], None]


def _memory() -> Backend:
    store = InMemoryBlobStore()

    def overwrite(key: BlobKey, data: bytes) -> None:
        store._blobs[key] = data

    return Backend(store, overwrite)


def _filesystem(url: str) -> Backend:
    store = FileSystemBlobStore(url)

    def overwrite(key: BlobKey, data: bytes) -> None:
        fs, path = fsspec.core.url_to_fs(url)
        fs.pipe_file(f"{path.rstrip('/')}/{key.digest[:2]}/{key.digest}", data)

    return Backend(store, overwrite)


@pytest.fixture(params=["in-memory", "local-directory", "fsspec-memory-url"])
def backend(request, tmp_path):
    if request.param == "in-memory":
        yield _memory()
    elif request.param == "local-directory":
        yield _filesystem(str(tmp_path / "blobs"))
    else:
        url = f"memory://tidal-tests/{uuid.uuid4().hex}"
        yield _filesystem(url)
        fsspec.filesystem("memory").rm(url.removeprefix("memory://"), recursive=True)
