"""Blobs as a TaskManager sees them: fetched from the JobManager, cached, checked.

A TaskManager never puts blobs; it asks the JobManager for the bytes of a key (a Ray call in
the actor, a dict lookup in tests) through a :class:`blob.BlobCache`, which fetches each key
once however many tasks want it. Every fetched blob is checked against its key.
"""

from __future__ import annotations

from collections.abc import Callable

import cloudpickle

from blob import BlobCache, BlobKey, verified
from jobmanager.messages.deployment import TaskDeploymentDescriptor
from jobmanager.model.operators import VertexCode

__all__ = ["FetchedBlobs", "load_vertex_code"]


class FetchedBlobs:
    """The read side of a BlobStore, over ``fetch(key_hex) -> bytes``; what a BlobCache
    wraps in a TaskManager."""

    def __init__(self, fetch: Callable[[str], bytes], location: str) -> None:
        self._fetch = fetch
        self.location = location

    def get(self, key: BlobKey) -> bytes:
        return verified(key, bytes(self._fetch(key.digest)), self.location)


def load_vertex_code(blobs: BlobCache, tdd: TaskDeploymentDescriptor) -> VertexCode:
    """The vertex's operator and sources. A descriptor without a code key carries no user code:
    the task passes its single input through."""
    if not tdd.code_key:
        return VertexCode(None, ())
    code = cloudpickle.loads(blobs.get(BlobKey(tdd.code_key)))
    if not isinstance(code, VertexCode):
        raise TypeError(
            f"vertex {tdd.vertex!r}: blob {tdd.code_key} holds a {type(code).__name__}, "
            "not the vertex's code"
        )
    return code
