"""Which member names a zip may hold: none that escapes the folder it would be unpacked into.

A name is refused when it is absolute (``/etc/passwd``, ``\\share``), names a drive
(``C:``), climbs with ``..``, holds a NUL or another control character, or when the
member is a symbolic link (a Unix mode kept in the entry's external attributes).
Backslashes count as separators, as Windows tools write them.
"""

from __future__ import annotations

import re
import stat
import zipfile

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_UNIX = 3  # ZipInfo.create_system of entries made on Unix


def parts(name: str) -> tuple[str, ...]:
    """Return the path components of a member name, backslashes read as separators."""
    return tuple(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))


def unsafe_reason(info: zipfile.ZipInfo) -> str | None:
    """Return why a member may not be read (its path escapes, or it is a link), or None when it is safe."""
    name = info.filename
    if _CONTROL.search(name) or _CONTROL.search(info.orig_filename):  # zipfile cuts a name at its first NUL
        return "its name holds a control character"
    normalized = name.replace("\\", "/")
    if normalized.startswith("/"):
        return "its path is absolute"
    if _DRIVE.match(normalized):
        return "its path names a drive"
    if ".." in normalized.split("/"):
        return "its path climbs out of the archive with '..'"
    if is_symlink(info):
        return "it is a symbolic link"
    return None


def is_symlink(info: zipfile.ZipInfo) -> bool:
    """Return whether an entry carries the Unix mode of a symbolic link."""
    mode = info.external_attr >> 16
    return info.create_system == _UNIX and stat.S_ISLNK(mode)


def is_noise(name: str) -> bool:
    """Return whether a member is packaging noise: a folder, macOS metadata or a dot-file."""
    components = parts(name)
    if not components or name.endswith(("/", "\\")):
        return True
    return "__MACOSX" in components or components[-1].startswith(".")


def under(name: str, folder: str) -> str | None:
    """Return a member's path relative to folder (both as components joined by '/'), or None when outside it."""
    inside, base = parts(name), parts(folder)
    if inside[: len(base)] != base:
        return None
    return "/".join(inside[len(base):])
