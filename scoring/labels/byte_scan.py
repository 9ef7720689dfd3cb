"""The raw bytes of a label file: read whole, and looked at before pyarrow parses them.

The fast parser (``scoring.labels.fast``) hands a file to pyarrow only when these
looks pass, after renaming list values of breakdown fields so that pyarrow sees one
type per column.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path

import numpy as np

from scoring.types import LabelFileError

_WHITESPACE = b" \t\r\n"
_CHUNK_BYTES = 1 << 20
_LENIENT = (b"NaN", b"Infinity")  # pyarrow reads these bare words; strict JSON does not
_BARE_CONSTANT = re.compile(rb"[:,\[]\s*-?(?:NaN|Infinity)")
_LINE_EDGE = re.compile(rb"(?<![} \t\r])[ \t\r]*+\n|\n[ \t\r]*+(?!\{)")  # a line not ending in } or not starting with {
_BOM = b"\xef\xbb\xbf"
LIST_SUFFIX = "[]"
LabelSource = str | os.PathLike[str] | bytes
"""A label file: its path, or its bytes."""


def read_bytes(source: LabelSource) -> bytes:
    """Return the label file's bytes."""
    if isinstance(source, bytes):
        return source
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise LabelFileError(f"cannot read the label file: {exc}") from exc


def has_bare_constant(data: bytes) -> bool:
    """Return whether a value is a bare NaN or Infinity (the words inside a string are fine)."""
    return any(word in data for word in _LENIENT) and _BARE_CONSTANT.search(data) is not None


def is_utf8(data: bytes) -> bool:
    """Return whether the bytes are UTF-8 (pyarrow does not check), without a full copy."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _CHUNK_BYTES):
            decoder.decode(view[start : start + _CHUNK_BYTES])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def framed_lines(data: bytes) -> int | None:
    """Return the number of lines when each starts with ``{`` and ends with ``}`` and none is blank, else None.

    pyarrow reads two objects on one line, or one object over two lines, without a
    word; Python's decoder refuses both. When every line is framed by braces no
    object can span lines (after ``}`` only ``,``, ``}`` or ``]`` may continue one),
    so as many rows as framed lines means exactly one object on each line.
    """
    start = len(_BOM) if data.startswith(_BOM) else 0
    end = len(data)
    while end > start and data[end - 1] in _WHITESPACE:
        end -= 1
    while start < end and data[start] in b" \t":
        start += 1
    if end == start or data[start] != ord("{") or data[end - 1] != ord("}"):
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    found = [np.flatnonzero(raw[at : min(at + _CHUNK_BYTES, end)] == ord("\n")) + at
             for at in range(start, end, _CHUNK_BYTES)]
    newlines = np.concatenate(found)
    before = raw[newlines - 1]
    before = np.where(before == ord("\r"), raw[newlines - 2], before)  # CRLF
    framed = bool((before == ord("}")).all() and (raw[newlines + 1] == ord("{")).all())
    if not framed and _LINE_EDGE.search(data, start, end) is not None:  # spaces around a brace: look closer
        return None
    return len(newlines) + 1


def _key(name: str) -> bytes:
    """Return a field name as the JSON key bytes a label line carries."""
    return json.dumps(name, ensure_ascii=False).encode("utf-8")


def rename_lists(data: bytes, fields: tuple[str, ...]) -> tuple[bytes, tuple[str, ...]]:
    """Rename list values of breakdown fields to ``name + LIST_SUFFIX``.

    pyarrow refuses a column that is a string on some lines and a list on others (the
    category of docs/FORMATS.md may be either), so list values go to their own column.
    ``"name": [`` outside a key can only occur inside a key ending in an escaped quote,
    and a renamed key only ever adds a column the fast reader does not use;
    ``scoring.labels.fast`` checks that every string value was seen. A file that already
    has a key ``name[]`` is left alone.
    """
    renamed = []
    for name in fields:
        key, new_key = _key(name), _key(name + LIST_SUFFIX)
        patterns = [p for p in (key + b": [", key + b":[") if p in data]
        if patterns and new_key not in data:
            for p in patterns:
                data = data.replace(p, new_key + p[len(key):])
            renamed.append(name)
    return data, tuple(renamed)


def string_keys(data: bytes, name: str) -> int:
    """Return how many keys ``name`` the (renamed) data has that are not ``null``."""
    key = _key(name)
    return data.count(key) - data.count(key + b": null") - data.count(key + b":null")
