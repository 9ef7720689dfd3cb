"""The one storage interface: put bytes or a stream under a key, read them back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Protocol


class StorageError(Exception):
    """A storage backend failed (I/O error, missing object); the message is for logs only."""


class ObjectNotFound(StorageError):
    """No object is stored under the key."""


@dataclass(frozen=True)
class StoredObject:
    """What ``put`` stored: the key, its size in bytes and its SHA-256 hex digest."""

    key: str
    size: int
    sha256: str


class Storage(Protocol):
    """A flat key → bytes store. Keys are '/'-separated relative paths without '..'."""

    def put(self, key: str, data: bytes | BinaryIO) -> StoredObject:
        """Store data under key durably (fsync'd / acknowledged) and return what was stored."""
        ...

    def open(self, key: str) -> BinaryIO:
        """Return a readable binary stream of the object; raise ObjectNotFound if absent."""
        ...

    def read_bytes(self, key: str) -> bytes:
        """Return the whole object; raise ObjectNotFound if absent."""
        ...

    def exists(self, key: str) -> bool:
        """Return whether an object is stored under key."""
        ...

    def delete(self, key: str) -> None:
        """Remove the object if present; absent keys are not an error."""
        ...

    def iter_keys(self, prefix: str = "") -> Iterator[str]:
        """Yield the stored keys that start with prefix, in sorted order."""
        ...
