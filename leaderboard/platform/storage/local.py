"""Storage on the local filesystem: atomic, fsync'd writes under one root directory."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from leaderboard.platform.storage.base import ObjectNotFound, StorageError, StoredObject
from leaderboard.platform.storage.keys import TEMP_PREFIX, check_key, check_prefix

CHUNK_SIZE = 1024 * 1024


class LocalStorage:
    """Objects are files under ``root``; a key's segments are its directories."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"LocalStorage({str(self.root)!r})"

    def put(self, key: str, data: bytes | BinaryIO) -> StoredObject:
        """Write data to a temp file, fsync it, then rename it over the key's path."""
        target = self._path(key)
        with self._disk_errors("write", key):
            _make_dirs_durably(target.parent)
            fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=TEMP_PREFIX)
        try:
            with os.fdopen(fd, "wb") as out:
                # Errors reading ``data`` are the caller's and propagate unchanged;
                # only disk errors become StorageError.
                size, sha256 = _copy_hashing(data, out, self._disk_errors("write", key))
                with self._disk_errors("write", key):
                    out.flush()
                    os.fsync(out.fileno())
            with self._disk_errors("write", key):
                os.replace(temp_name, target)
                _fsync_dir(target.parent)
        except BaseException:
            _remove_quietly(temp_name)
            raise
        return StoredObject(key=key, size=size, sha256=sha256)

    def open(self, key: str) -> BinaryIO:
        """Return the object's file opened for binary reading."""
        path = self._path(key)
        try:
            return path.open("rb")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise ObjectNotFound(f"no object {key!r} in {self}") from None
        except OSError as error:
            raise StorageError(f"cannot read {key!r} under {self.root}: {error}") from error

    def read_bytes(self, key: str) -> bytes:
        """Return the whole object."""
        with self.open(key) as handle, self._disk_errors("read", key):
            return handle.read()

    def exists(self, key: str) -> bool:
        """Return whether a file is stored under key."""
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        """Remove the object's file if present."""
        path = self._path(key)
        try:
            path.unlink()
            _fsync_dir(path.parent)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return  # a directory is only a prefix of other keys, not an object
        except OSError as error:
            raise StorageError(f"cannot delete {key!r} under {self.root}: {error}") from error

    def iter_keys(self, prefix: str = "") -> Iterator[str]:
        """Yield the stored keys that start with prefix, in sorted order."""
        check_prefix(prefix)
        directory = prefix.rpartition("/")[0]
        start = self.root / directory if directory else self.root
        with self._disk_errors("list", prefix):
            keys = sorted(key for key in _walk_keys(start, self.root) if key.startswith(prefix))
        yield from keys

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*check_key(key).split("/"))

    def _disk_errors(self, action: str, key: str) -> _DiskErrors:
        return _DiskErrors(f"cannot {action} {key!r} under {self.root}")


class _DiskErrors:
    """A reusable context manager turning OSError into StorageError with a message."""

    def __init__(self, message: str) -> None:
        self.message = message

    def __enter__(self) -> None:
        return None

    def __exit__(self, _type: object, error: BaseException | None, _traceback: object) -> None:
        if isinstance(error, OSError):
            raise StorageError(f"{self.message}: {error}") from error


def _copy_hashing(data: bytes | BinaryIO, out: BinaryIO, disk_errors: _DiskErrors) -> tuple[int, str]:
    """Copy data to out in chunks; return its size and SHA-256 hex digest."""
    digest = hashlib.sha256()
    if isinstance(data, (bytes, bytearray, memoryview)):
        digest.update(data)
        with disk_errors:
            out.write(data)
        return len(data), digest.hexdigest()
    size = 0
    while chunk := data.read(CHUNK_SIZE):
        digest.update(chunk)
        size += len(chunk)
        with disk_errors:
            out.write(chunk)
    return size, digest.hexdigest()


def _walk_keys(start: Path, root: Path) -> Iterator[str]:
    """Yield the '/'-joined relative path of every stored file below start."""
    if not start.is_dir():
        return
    for dirpath, _dirnames, filenames in os.walk(start, onerror=_raise):
        relative = Path(dirpath).relative_to(root).as_posix()
        for name in filenames:
            if not name.startswith(TEMP_PREFIX):
                yield name if relative == "." else f"{relative}/{name}"


def _raise(error: OSError) -> None:
    raise error


def _make_dirs_durably(directory: Path) -> None:
    """Create directory and its missing parents, fsyncing each parent that gained an entry."""
    missing = []
    while not directory.is_dir():
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            if not path.is_dir():
                raise
            continue  # a concurrent writer created it
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    """Flush a directory entry change (create, rename, unlink) to disk."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
