"""A previewed import's files, kept so the organizer does not upload them twice.

A preview stores the released file (and CoLoTa's CSVs) under
``imports/<competition id>/<token>/`` in the uploads storage and hands back the token; the
import form sends it back instead of the files. The token is random (128 bits) and only
read for the competition it was made for, by someone who manages it (the caller checked);
nothing public routes to these keys. A kept import is read as often as asked: the
organizer may preview again with other options.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass

from leaderboard.platform import InvalidInput, ServiceContext
from leaderboard.platform.storage.base import ObjectNotFound

TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")
PARTS = ("source", "originals", "modified")


@dataclass(frozen=True)
class ImportSources:
    """The files of one import: the released file and, for CoLoTa, the originals and modified CSVs."""

    source: bytes
    filename: str = "source"
    originals: bytes | None = None
    modified: bytes | None = None


def keep_sources(ctx: ServiceContext, *, competition_id: int, sources: ImportSources) -> str:
    """Store an import's files for a later import; return their token."""
    token = secrets.token_hex(16)
    base = f"imports/{competition_id}/{token}"
    for part in PARTS:
        data = getattr(sources, part)
        if data:
            ctx.storage.put(f"{base}/{part}", data)
    ctx.storage.put(f"{base}/meta.json", json.dumps({"filename": sources.filename}).encode())
    return token


def kept_sources(ctx: ServiceContext, *, competition_id: int, token: str | None) -> ImportSources:
    """Return the files kept under token for this competition; InvalidInput when there are none."""
    if not token or not TOKEN_RE.match(token):
        raise InvalidInput("Upload the benchmark's released file.")
    base = f"imports/{competition_id}/{token}"
    try:
        meta = json.loads(ctx.storage.read_bytes(f"{base}/meta.json"))
        source = ctx.storage.read_bytes(f"{base}/source")
    except ObjectNotFound:
        raise InvalidInput("The previewed file is no longer kept; upload it again.") from None
    parts = {part: _optional(ctx, f"{base}/{part}") for part in ("originals", "modified")}
    return ImportSources(source=source, filename=str(meta.get("filename") or "source"), **parts)


def _optional(ctx: ServiceContext, key: str) -> bytes | None:
    """Return a stored file's bytes, or None when it was not kept."""
    try:
        return ctx.storage.read_bytes(key)
    except ObjectNotFound:
        return None
