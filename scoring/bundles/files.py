"""The files of a bundle: competition.yaml, and what its paths name (a file, a folder, or a zip inside).

Every read goes through the safe zip reader (``scoring.zips``) with a limit per kind of
file and one budget for the whole bundle, so a bundle cannot make the import inflate
more than ``BUNDLE_BUDGET`` bytes in all, whatever it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from scoring.bounded import size_text
from scoring.bundles.plan import BundleError
from scoring.types import DEFAULT_MAX_BYTES
from scoring.zips import ArchiveError, SafeZip
from scoring.zips.paths import parts, under

YAML_LIMIT = 1 << 20
TEXT_LIMIT = 4 << 20  # a page, a source file of a scoring program
DATA_LIMIT = DEFAULT_MAX_BYTES  # a reference data file or a zip of them
BUNDLE_BUDGET = 2 << 30
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
YAML_NAMES = ("competition.yaml", "competition.yml")


@dataclass(frozen=True)
class Files:
    """Files named by one path of competition.yaml: a folder of the bundle, a zip in it, or a single file."""

    archive: SafeZip
    base: str  # folder inside archive ("" for a zip's root); for a single file, the file itself
    shown: str  # how the report names the path
    single: bool = False

    def names(self) -> list[str]:
        """Return the paths of the files, relative to the folder (for a single file, its name)."""
        if self.single:
            return [PurePosixPath(self.base).name]
        found = (under(member.name, self.base) for member in self.archive.members())
        return [name for name in found if name]

    def read(self, name: str, *, limit: int) -> bytes:
        """Return one of the files' bytes within limit."""
        return self.archive.read(self.base if self.single else _join(self.base, name), limit=limit)

    def text(self, name: str, *, limit: int = TEXT_LIMIT) -> str:
        """Return one of the files as UTF-8 text."""
        return self.archive.read_text(self.base if self.single else _join(self.base, name), limit=limit)

    def label(self, name: str) -> str:
        """Return how the report names one of the files."""
        return self.shown if self.single else _join(self.shown.rstrip("/"), name)


class Bundle:
    """An opened bundle: its archive, the folder of its competition.yaml, and that file's content."""

    def __init__(self, archive: SafeZip) -> None:
        self.archive = archive
        self.root = _root(archive)
        self.yaml = _load_yaml(archive, _join(self.root, YAML_NAMES[0]) if archive.has(
            _join(self.root, YAML_NAMES[0])) else _join(self.root, YAML_NAMES[1]))

    def path(self, relative: str) -> str:
        """Return the member path of a path written in competition.yaml."""
        return _join(self.root, "/".join(parts(relative)))

    def text(self, relative: str, *, limit: int = TEXT_LIMIT) -> str:
        """Return a file named in competition.yaml as UTF-8 text."""
        return self.archive.read_text(self.path(relative), limit=limit)

    def files(self, relative: str) -> Files | None:
        """Return the files a path of competition.yaml names, or None when the bundle holds nothing there.

        A zip (by its first bytes, whatever its name) is opened; a folder lists its files;
        any other file stands alone.
        """
        member = self.path(relative)
        if self.archive.has(member):
            head = b"".join(_first(self.archive, member))
            if head.startswith(ZIP_MAGIC):
                return Files(self.archive.open_zip(member, limit=DATA_LIMIT), "", relative)
            return Files(self.archive, member, relative, single=True)
        folder = Files(self.archive, member, relative.rstrip("/") + "/")
        return folder if member and folder.names() else None


def _first(archive: SafeZip, member: str) -> list[bytes]:
    """Return the first chunk of a member (enough to see its magic bytes), without reading the rest."""
    for chunk in archive.stream(member, limit=DATA_LIMIT):
        return [chunk[:4]]
    return []


def _join(folder: str, name: str) -> str:
    """Return folder/name, or name alone when folder is empty."""
    folder = folder.strip("/")
    return f"{folder}/{name}" if folder else name


def _root(archive: SafeZip) -> str:
    """Return the folder holding competition.yaml: the top, or the one folder a zipped folder adds."""
    if any(archive.has(name) for name in YAML_NAMES):
        return ""
    nested = [m.name for m in archive.members() if len(parts(m.name)) == 2 and parts(m.name)[1] in YAML_NAMES]
    if len(nested) == 1:
        return parts(nested[0])[0]
    raise BundleError("This is not a competition bundle: there is no competition.yaml at the top of the zip.")


def _load_yaml(archive: SafeZip, member: str) -> dict[Any, Any]:
    """Return competition.yaml as a mapping, or raise BundleError saying why it cannot be read."""
    try:
        text = archive.read_text(member, limit=YAML_LIMIT)
    except ArchiveError as error:
        raise BundleError(f"competition.yaml cannot be read: {error} (at most {size_text(YAML_LIMIT)})") from None
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "it does not parse"
        raise BundleError(f"competition.yaml is not valid YAML{where}: {problem}.") from None
    except RecursionError:
        raise BundleError("competition.yaml is not valid YAML: it is nested too deeply.") from None
    if not isinstance(loaded, dict):
        raise BundleError("competition.yaml must be a mapping of settings (title, phases, ...).")
    return loaded
