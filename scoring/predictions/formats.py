"""Turn an uploaded prediction file into UTF-8 text of a known format (docs/FORMATS.md, Prediction files).

The upload is read with ``scoring.bounded.read_bounded``; archives are recognised by
their magic bytes and inflated in bounded chunks, so a compression bomb is refused
after at most ``max_bytes`` of output; the text format
(CSV, JSON or JSON Lines) is sniffed from the content, never from the file name.
"""

from __future__ import annotations

import io
import json
import lzma
import os
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import BinaryIO, Literal

from scoring.bounded import FileTooLarge, read_bounded
from scoring.types import PredictionFileError, Problem

Format = Literal["csv", "json", "jsonl"]
Source = bytes | str | os.PathLike[str] | BinaryIO

CHUNK = 1 << 20
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
_NOT_BLANK = re.compile(rb"[^ \t\r\n\x0b\x0c]")
_NOT_ZERO = re.compile(rb"[^\x00]")
_NOT_JSON = object()
# what zipfile and its decompressors raise on corrupt input (it checks little itself)
_BROKEN_ZIP = (
    zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError,
    IndexError, KeyError, OverflowError, struct.error, NotImplementedError,
)
_JSON_LINE = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)


@dataclass(frozen=True)
class Document:
    """The decoded content of a prediction file: its format and UTF-8 bytes without BOM."""

    kind: Format
    data: bytes

    def text(self) -> str:
        """Return the content as a string (it is known to be valid UTF-8)."""
        return self.data.decode("utf-8")


def file_error(message: str) -> PredictionFileError:
    """Return the error of one problem of the whole file."""
    return PredictionFileError([Problem(line=None, id=None, message=message)], 1)


def load_document(source: Source, *, max_bytes: int) -> Document:
    """Read, unpack, decode and sniff a prediction file, or raise its whole-file problem."""
    data = unpack(read_source(source, max_bytes=max_bytes), max_bytes=max_bytes)
    data = data.removeprefix(UTF8_BOM)
    check_utf8(data)
    kind = sniff(data)
    if kind is None:
        raise file_error("The file is empty: it holds no predictions.")
    return Document(kind=kind, data=data)


def read_source(source: Source, *, max_bytes: int) -> bytes:
    """Return the raw bytes of the upload, reading at most one byte past the limit."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as stream:
            return read_bounded(stream, limit=max_bytes)
    return read_bounded(source, limit=max_bytes)


def is_archive(data: bytes) -> bool:
    """Return whether the bytes start like a zip or gzip archive."""
    return data.startswith(ZIP_MAGICS) or data.startswith(GZIP_MAGIC)


def unpack(data: bytes, *, max_bytes: int) -> bytes:
    """Return the one file inside a zip or gzip upload, or the upload itself."""
    if data.startswith(ZIP_MAGICS):
        inner = _unzip(data, max_bytes)
    elif data.startswith(GZIP_MAGIC):
        inner = _gunzip(data, max_bytes)
    else:
        return data
    if is_archive(inner):
        raise file_error(
            "The archive holds another archive; an archive inside an archive is refused. "
            "Put the prediction file itself in the zip or gzip."
        )
    return inner


def _unzip(data: bytes, max_bytes: int) -> bytes:
    """Return the only regular file of a zip archive, inflated within the limit."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [info for info in archive.infolist() if _counts(info)]
            if not members:
                raise file_error("The file is empty: the zip archive holds no file.")
            if len(members) > 1:
                names = ", ".join(info.filename for info in members[:5])
                more = ", ..." if len(members) > 5 else ""
                raise file_error(
                    f"The zip archive holds {len(members)} files ({names}{more}); "
                    "it must hold exactly one prediction file."
                )
            return _inflate_member(archive, members[0], max_bytes)
    except _BROKEN_ZIP:
        raise file_error("The zip archive is damaged and cannot be opened.") from None


def _counts(info: zipfile.ZipInfo) -> bool:
    """Return whether a zip entry is a real file (not a folder, macOS resource or dot-file)."""
    parts = PurePosixPath(info.filename.replace("\\", "/")).parts
    if info.is_dir() or not parts:
        return False
    return "__MACOSX" not in parts and not parts[-1].startswith(".")


def _inflate_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, max_bytes: int) -> bytes:
    """Read one zip member in chunks, stopping as soon as it passes the limit."""
    if info.flag_bits & 0x1:
        raise file_error("The zip archive is password-protected; upload it without a password.")
    if info.file_size > max_bytes:
        raise FileTooLarge(max_bytes)
    try:
        with archive.open(info) as member:
            return read_bounded(member, limit=max_bytes)
    except NotImplementedError:
        raise file_error(
            "The zip archive uses a feature or compression method that is not supported; "
            "make a plain zip (deflate)."
        ) from None


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    """Inflate a one-member gzip file, never producing more than the limit plus one byte."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = io.BytesIO()
    pending, offset = b"", 0
    try:
        while not inflater.eof:
            if not pending:
                pending, offset = data[offset : offset + CHUNK], offset + CHUNK
                if not pending:
                    raise file_error("The gzip file is damaged or truncated.")
            out.write(inflater.decompress(pending, max_bytes + 1 - out.tell()))
            pending = inflater.unconsumed_tail
            if out.tell() > max_bytes:
                raise FileTooLarge(max_bytes)
    except zlib.error:
        raise file_error("The gzip file is damaged or truncated.") from None
    if inflater.unused_data.strip(b"\x00") or _NOT_ZERO.search(data, offset):
        raise file_error(
            "The gzip file holds more than one member, or data after its end; "
            "compress exactly one file."
        )
    return out.getvalue()


def check_utf8(data: bytes) -> None:
    """Raise the not-UTF-8 problem, naming the line and byte offset, unless data is UTF-8."""
    if data.isascii():
        return
    start = 0
    while start < len(data):
        end = min(start + CHUNK, len(data))
        for _ in range(3):  # never cut a multi-byte character in two
            if end < len(data) and 0x80 <= data[end] < 0xC0:
                end -= 1
        try:
            data[start:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            _raise_not_utf8(data, start + exc.start)
        start = end


def _raise_not_utf8(data: bytes, offset: int) -> None:
    """Raise the not-UTF-8 problem for the first bad byte at offset."""
    line = data.count(b"\n", 0, offset) + 1
    hint = " It looks like UTF-16." if data.startswith((b"\xff\xfe", b"\xfe\xff")) else ""
    raise file_error(
        f"The file is not UTF-8 text: the bytes at line {line} (byte offset {offset}) "
        f"are not valid UTF-8.{hint} Save the file as UTF-8 and upload it again."
    )


def sniff(data: bytes) -> Format | None:
    """Return the format of UTF-8 content, or None when it holds only whitespace."""
    first = _NOT_BLANK.search(data)
    if first is None:
        return None
    start = data.rfind(b"\n", 0, first.start()) + 1
    end = data.find(b"\n", first.start())
    end = len(data) if end < 0 else end
    more = _NOT_BLANK.search(data, end) is not None
    head = data[first.start()]
    if head == ord("{") and isinstance(_json_value(data[start:end].decode("utf-8")), dict):
        return "jsonl" if more else "json"
    if head in b"[{":
        return "json"  # not one object per line: broken JSON is reported as JSON
    if not more and _json_value(data[start:end].decode("utf-8")) is not _NOT_JSON:
        return "json"
    return "csv"


def _json_value(line: str) -> object:
    """Return the JSON value a whole line holds, or _NOT_JSON when it is not one value."""
    try:
        value: object = _JSON_LINE.decode(line)
    except (json.JSONDecodeError, RecursionError):
        return _NOT_JSON
    return value
