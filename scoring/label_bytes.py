"""The raw bytes of a label file, looked at before pyarrow parses them.

The fast reader (``scoring.label_fast``) hands a file to pyarrow only when these
checks pass, after renaming list values of breakdown fields so that pyarrow sees one
type per column.
"""

from __future__ import annotations

import codecs
import json
import re

_WHITESPACE = b" \t\r\n"
_CHUNK_BYTES = 1 << 20
_LENIENT = (b"NaN", b"Infinity")  # pyarrow reads these bare words; strict JSON does not
_BARE_CONSTANT = re.compile(rb"[:,\[]\s*-?(?:NaN|Infinity)")
LIST_SUFFIX = "[]"


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


def count_lines(data: bytes) -> int:
    """Return the number of lines up to the last non-blank one."""
    end = len(data)
    while end and data[end - 1] in _WHITESPACE:
        end -= 1
    return data.count(b"\n", 0, end) + 1


def _key(name: str) -> bytes:
    """Return a field name as the JSON key bytes a label line carries."""
    return json.dumps(name, ensure_ascii=False).encode("utf-8")


def rename_lists(data: bytes, fields: tuple[str, ...]) -> tuple[bytes, tuple[str, ...]]:
    """Rename list values of breakdown fields to ``name + LIST_SUFFIX``.

    pyarrow refuses a column that is a string on some lines and a list on others (the
    category of SPEC §2.1 may be either), so list values go to their own column.
    ``"name": [`` outside a key can only occur inside a key ending in an escaped quote,
    and a renamed key only ever adds a column the fast reader does not use;
    ``scoring.label_fast`` checks that every string value was seen. A file that already
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
