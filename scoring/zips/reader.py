"""Read a zip archive without trusting it: bounded members, no escaping paths, errors that name the member.

``SafeZip`` opens an archive from a path, bytes or a stream and checks every entry's
name first (``scoring.zips.paths``): one absolute, climbing (``..``), drive-named or
symbolic-link entry refuses the whole archive, since a later unpacking could write
outside its folder. A member is read in chunks: its declared size is checked against
the caller's limit before anything is inflated, and the bytes actually inflated are
counted against both, so a member never takes more memory than its limit (a 3 MB
archive holding 3 GiB of zeros is refused after reading its directory). An optional
``budget`` bounds everything inflated from one archive, against archives of many
members that share one compressed body.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import shutil
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

from scoring.bounded import size_text
from scoring.types import DEFAULT_MAX_BYTES
from scoring.zips.errors import ArchiveError
from scoring.zips.paths import is_noise, parts, unsafe_reason
from scoring.zips.records import Record, parse_json, parse_jsonl

Source = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]

MEMBER_LIMIT = DEFAULT_MAX_BYTES
"""Default cap of one member's inflated size (100 MiB, the upload limit of docs/FORMATS.md)."""
MAX_MEMBERS = 100_000
MAX_SPOOLED = 1 << 32
"""Most bytes copied from a stream that cannot seek (zipfile needs to seek)."""
CHUNK = 1 << 20
# what zipfile and its decompressors raise on corrupt input (it checks little itself)
BROKEN = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError, IndexError,
          KeyError, OverflowError, struct.error)


@dataclass(frozen=True)
class Member:
    """One file of an archive: its name as stored and its declared sizes."""

    name: str
    size: int
    compressed_size: int


class SafeZip:
    """A zip archive opened for bounded, checked reading; use as a context manager or close() it."""

    def __init__(self, source: Source, *, prefix: str = "", budget: int | None = None,
                 max_members: int = MAX_MEMBERS) -> None:
        self.prefix = prefix  # how messages name this archive's members: "" or "outer.zip/"
        self.budget = budget
        self.spent = 0
        self._zip = _open(source, prefix)
        try:
            self._entries, self._ambiguous = _index(self._zip, prefix, max_members)
        except BaseException:
            self._zip.close()
            raise

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the archive (and its file, when it was opened from a path)."""
        self._zip.close()

    def members(self, *, noise: bool = False) -> list[Member]:
        """Return the files of the archive in stored order; folders always, and macOS or dot-files unless noise."""
        return [Member(info.filename, info.file_size, info.compress_size)
                for info in self._entries.values() if not info.is_dir() and (noise or not is_noise(info.filename))]

    def has(self, name: str) -> bool:
        """Return whether the archive holds a file of this name ('./a\\\\b' and 'a/b' are one name)."""
        info = self._entries.get(_key(name))
        return info is not None and not info.is_dir()

    def stream(self, name: str, *, limit: int = MEMBER_LIMIT) -> Iterator[bytes]:
        """Return a member's bytes as chunks; refused before inflating anything when it declares more than limit."""
        info = self._info(name)
        shown = self.prefix + info.filename
        if info.file_size > limit:
            raise ArchiveError(f"{shown} is too large: it holds {size_text(info.file_size)}, "
                               f"the limit is {size_text(limit)}")
        if info.flag_bits & 0x1:
            raise ArchiveError(f"{shown} is password-protected; make the archive without a password")
        return self._inflate(info, min(limit, info.file_size), shown)

    def read(self, name: str, *, limit: int = MEMBER_LIMIT, sha256: str | None = None) -> bytes:
        """Return a member's bytes within limit; with sha256, refuse them unless they have that digest."""
        buffer = io.BytesIO()
        digest = hashlib.sha256()
        for chunk in self.stream(name, limit=limit):
            buffer.write(chunk)
            digest.update(chunk)
        if sha256 is not None and digest.hexdigest() != sha256.lower():
            raise ArchiveError(f"{self.prefix}{name} is damaged: its SHA-256 is not the recorded one")
        return buffer.getvalue()

    def read_text(self, name: str, *, limit: int = MEMBER_LIMIT) -> str:
        """Return a member as UTF-8 text (a BOM dropped), or raise naming where it is not UTF-8."""
        data = self.read(name, limit=limit)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            raise ArchiveError(f"{self.prefix}{name} line {line}: not UTF-8 text "
                               f"(byte offset {error.start})") from None

    def read_json(self, name: str, *, limit: int = MEMBER_LIMIT) -> Any:
        """Return a JSON member's value (objects as Records), or raise naming the member and line."""
        return parse_json(self.read_text(name, limit=limit), member=self.prefix + name)

    def read_jsonl(self, name: str, *, limit: int = MEMBER_LIMIT) -> list[Record]:
        """Return a JSON Lines member's objects as Records, or raise naming the member and line."""
        return parse_jsonl(self.read_text(name, limit=limit), member=self.prefix + name)

    def open_zip(self, name: str, *, limit: int = MEMBER_LIMIT) -> SafeZip:
        """Open a zip stored inside this one (read within limit), its members named 'outer/inner' in messages."""
        data = self.read(name, limit=limit)
        remaining = None if self.budget is None else max(self.budget - self.spent, 0)
        return SafeZip(data, prefix=f"{self.prefix}{name}/", budget=remaining)

    def _info(self, name: str) -> zipfile.ZipInfo:
        """Return the entry of a file member, or raise naming what is missing."""
        info = self._entries.get(_key(name))
        if info is None or info.is_dir():
            raise ArchiveError(f"{self.prefix.rstrip('/') or 'the archive'} has no member {name}")
        if _key(name) in self._ambiguous:
            raise ArchiveError(f"{self.prefix}{name} appears twice in the archive with different contents")
        return info

    def _inflate(self, info: zipfile.ZipInfo, cap: int, shown: str) -> Iterator[bytes]:
        """Yield the inflated chunks of an entry, refusing it past cap bytes or past this archive's budget."""
        seen = 0
        try:
            with self._zip.open(info) as handle:
                while chunk := handle.read(min(CHUNK, cap + 1 - seen)):
                    seen += len(chunk)
                    self.spent += len(chunk)
                    if seen > cap:  # more than declared: zipfile should have stopped at the declared size
                        raise ArchiveError(f"{shown} is damaged: it holds more than its declared size")
                    if self.budget is not None and self.spent > self.budget:
                        raise ArchiveError(f"{self.prefix or 'the archive'}: its members inflate to more than "
                                           f"{size_text(self.budget)} in all")
                    yield chunk
        except NotImplementedError:
            raise ArchiveError(f"{shown} uses a compression method that is not supported; "
                               "make a plain zip (deflate)") from None
        except BROKEN:
            raise ArchiveError(f"{shown} is damaged and cannot be read") from None


def _key(name: str) -> str:
    """Return the lookup key of a member name: its components joined by '/'."""
    return "/".join(parts(name))


def _open(source: Source, prefix: str) -> zipfile.ZipFile:
    """Open the zip directory of a path, bytes or stream, or raise ArchiveError."""
    what = prefix.rstrip("/") or "the file"
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            return zipfile.ZipFile(io.BytesIO(bytes(source)))
        if isinstance(source, (str, os.PathLike)):
            return zipfile.ZipFile(source)
        return zipfile.ZipFile(source if source.seekable() else _spooled(source))
    except FileNotFoundError:
        raise ArchiveError(f"{what} cannot be read: no such file") from None
    except (NotImplementedError, *BROKEN):
        raise ArchiveError(f"{what} is not a zip archive, or it is damaged") from None


def _spooled(stream: IO[bytes]) -> IO[bytes]:
    """Copy a stream that cannot seek into a temporary file (in memory while small), at most MAX_SPOOLED bytes."""
    copy = tempfile.SpooledTemporaryFile(max_size=16 * CHUNK)  # noqa: SIM115 (the ZipFile owns it)
    shutil.copyfileobj(_Capped(stream, MAX_SPOOLED), copy, CHUNK)
    copy.seek(0)
    return copy


class _Capped(io.RawIOBase):
    """A read-only view of a stream that refuses to give more than cap bytes."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self.stream, self.left = stream, cap

    def readable(self) -> bool:
        """Return True: this view can be read."""
        return True

    def read(self, size: int = -1) -> bytes:
        """Return the next bytes, or raise ArchiveError once the stream passes the cap."""
        data = self.stream.read(CHUNK if size < 0 else size)
        self.left -= len(data)
        if self.left < 0:
            raise ArchiveError(f"the archive is too large: the limit is {size_text(MAX_SPOOLED)}")
        return data


def _index(archive: zipfile.ZipFile, prefix: str, max_members: int) -> tuple[dict[str, zipfile.ZipInfo], set[str]]:
    """Return the entries by lookup key and the keys stored twice with different contents; refuse unsafe names."""
    infos = archive.infolist()
    if len(infos) > max_members:
        raise ArchiveError(f"{prefix.rstrip('/') or 'the archive'} holds {len(infos):,} entries; "
                           f"the limit is {max_members:,}")
    entries: dict[str, zipfile.ZipInfo] = {}
    ambiguous: set[str] = set()
    for info in infos:
        reason = unsafe_reason(info)
        if reason is not None:
            raise ArchiveError(f"{prefix}{info.orig_filename!r} is refused: {reason}")
        key = _key(info.filename)
        earlier = entries.get(key)
        if earlier is None:
            entries[key] = info
        elif (earlier.CRC, earlier.file_size, earlier.is_dir()) != (info.CRC, info.file_size, info.is_dir()):
            ambiguous.add(key)
    return entries, ambiguous
