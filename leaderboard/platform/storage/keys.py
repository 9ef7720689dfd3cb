"""Key rules shared by every backend, so a bad key fails the same way everywhere."""

from __future__ import annotations

from leaderboard.platform.storage.base import StorageError

MAX_KEY_BYTES = 512  # S3 allows 1024 including our prefix; keep well under it
TEMP_PREFIX = ".tb-partial-"  # reserved for LocalStorage's in-flight temp files


class InvalidKey(StorageError, ValueError):
    """A key is not a '/'-separated relative path of plain segments."""


def check_key(key: object) -> str:
    """Return key unchanged if every backend can store it safely; else raise InvalidKey."""
    if not isinstance(key, str) or not key:
        raise InvalidKey(f"storage key must be a non-empty string, not {key!r}")
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidKey(f"storage key {key!r} is not valid UTF-8 text") from None
    if len(encoded) > MAX_KEY_BYTES:
        raise InvalidKey(f"storage key is longer than {MAX_KEY_BYTES} bytes")
    if "\\" in key:
        raise InvalidKey(f"storage key {key!r} contains a backslash")
    if any(ord(char) < 32 or ord(char) == 127 for char in key):
        raise InvalidKey(f"storage key {key!r} contains a control character")
    if key.startswith("/"):
        raise InvalidKey(f"storage key {key!r} is absolute")
    for segment in key.split("/"):
        if segment in ("", ".", ".."):
            raise InvalidKey(f"storage key {key!r} has an empty, '.' or '..' segment")
        if segment.startswith(TEMP_PREFIX):
            raise InvalidKey(f"storage key {key!r} uses the reserved prefix {TEMP_PREFIX!r}")
    return key


def check_prefix(prefix: object) -> str:
    """Return prefix unchanged if it can start a valid key ('' lists everything)."""
    if prefix == "":
        return ""
    if not isinstance(prefix, str):
        raise InvalidKey(f"storage prefix must be a string, not {prefix!r}")
    # A prefix may end mid-segment ("submissions/1") or after a slash ("phases/"):
    # it is valid when completing it with one plain character gives a valid key.
    check_key(prefix + "x")
    return prefix
