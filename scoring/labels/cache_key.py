"""The key of a label-cache entry: the label bytes, the phase config, and the code that builds label sets.

The code part is computed, never listed by hand: every module of the
``scoring.labels`` package and every scoring module those import, directly or not,
found by walking their import statements (absolute imports only, which
``tests/scoring/test_architecture.py`` enforces). Each file's path and bytes go into
the digest, so a module added to the package, moved, renamed or edited gives new
keys, and a stale entry is never read. The numpy and pyarrow versions are part of it
too.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from scoring.config import ConfigSource, read_config_object
from scoring.labels.byte_scan import LabelSource
from scoring.types import PhaseConfig, ScoringError

LABEL_CACHE_FORMAT = 1
"""Bump whenever what an entry holds changes (a code change needs no bump: see ``code_digest``)."""
SCORING_ROOT = Path(__file__).resolve().parents[1]
KEYED_PACKAGE = "labels"
_FROM = re.compile(r"^[ \t]*from[ \t]+(scoring(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.MULTILINE)


def entry_key(source: LabelSource, config: ConfigSource) -> str | None:
    """Return the entry name of a label file and config, None when either cannot be read."""
    try:
        if isinstance(source, bytes):
            label_digest = hashlib.sha256(source).hexdigest()
        else:
            with open(source, "rb") as handle:
                label_digest = hashlib.file_digest(handle, "sha256").hexdigest()
        if isinstance(config, PhaseConfig):
            canonical: Any = {"checked": dataclasses.asdict(config)}
        else:
            canonical = {"raw": None if config is None else dict(read_config_object(config))}
        config_json = json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (OSError, ValueError, TypeError, ScoringError):
        return None  # the normal load reports the problem
    config_digest = hashlib.sha256(config_json.encode()).hexdigest()
    parts = f"{LABEL_CACHE_FORMAT}\n{code_digest()}\n{label_digest}\n{config_digest}"
    return f"v{LABEL_CACHE_FORMAT}-{hashlib.sha256(parts.encode()).hexdigest()}"


@functools.cache
def code_digest() -> str:
    """Return the digest of this installation's label-building code (``source_digest`` of the scoring package)."""
    return source_digest(SCORING_ROOT)


def source_digest(root: Path) -> str:
    """Return a digest of the numpy and pyarrow versions and of every file ``keyed_files(root)`` finds."""
    digest = hashlib.sha256(f"numpy {np.__version__} pyarrow {pa.__version__}".encode())
    files = keyed_files(root)
    if not files:  # installed without sources: the versions and LABEL_CACHE_FORMAT alone key the code
        digest.update(b"no sources")
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def keyed_files(root: Path) -> list[Path]:
    """Return, sorted, every .py file of ``root/labels`` and of the scoring modules they import, transitively."""
    todo = sorted((root / KEYED_PACKAGE).rglob("*.py"))
    found: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.add(path)
        todo.extend(_imported_files(root, path.read_text(encoding="utf-8")))
    return sorted(found)


def _imported_files(root: Path, source: str) -> Iterator[Path]:
    """Yield the files of the scoring modules a module's source imports.

    ``from P import a, b`` names the modules ``P.a`` and ``P.b`` where they exist, and
    ``P`` itself when some name is not a module (it then comes from ``P``'s code).
    """
    for match in _FROM.finditer(source):
        package = match.group(1)
        names = re.findall(r"\w+", "\n".join(line.split("#")[0] for line in match.group(2).splitlines()))
        submodules = [f for name in names if (f := _module_file(root, f"{package}.{name}")) is not None]
        yield from submodules
        if len(submodules) < len([n for n in names if n != "as"]):
            yield from filter(None, [_module_file(root, package)])
    for match in _IMPORT.finditer(source):
        for name in re.findall(r"(?:^|,)\s*(scoring(?:\.\w+)*)", match.group(1)):
            yield from filter(None, [_module_file(root, name)])


def _module_file(root: Path, module: str) -> Path | None:
    """Return the file of a scoring module below the top package (__init__.py for a package), None if none."""
    parts = module.split(".")[1:]
    if not parts:
        return None  # the top package only gathers the public names of its subpackages
    base = root.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None
