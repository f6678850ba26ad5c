"""BlobKey: a blob's name is the SHA-256 of its bytes.

Content addressing makes a put idempotent (the same descriptors put twice are one blob), lets
any reader check what it got against the name it asked for, and needs no coordination between
the JobManager that puts and the TaskManagers that get.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass

__all__ = ["BlobKey"]

_HEX = frozenset(string.hexdigits.lower())


@dataclass(frozen=True, slots=True, order=True)
class BlobKey:
    """The lowercase hex SHA-256 digest of a blob's bytes."""

    digest: str

    def __post_init__(self) -> None:
        if len(self.digest) != 64 or not _HEX.issuperset(self.digest):
            raise ValueError(f"a blob key is 64 lowercase hex digits, not {self.digest!r}")

    @classmethod
    def of(cls, data: bytes | bytearray | memoryview) -> BlobKey:
        return cls(hashlib.sha256(data).hexdigest())

    def matches(self, data: bytes | bytearray | memoryview) -> bool:
        return hashlib.sha256(data).hexdigest() == self.digest

    def __str__(self) -> str:
        return self.digest
