"""Uploaded files: bounded reads and storage keys of submissions."""

from __future__ import annotations

import uuid
from typing import BinaryIO

from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import TooLarge
from leaderboard.storage.base import StoredObject

CHUNK = 1024 * 1024


def read_bounded(stream: BinaryIO | bytes, *, limit: int) -> bytes:
    """Return the whole upload, or raise TooLarge as soon as it passes limit bytes."""
    if isinstance(stream, (bytes, bytearray)):
        data = bytes(stream)
        if len(data) > limit:
            raise TooLarge(_too_large_message(limit))
        return data
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > limit:
            raise TooLarge(_too_large_message(limit))
        parts.append(chunk)


def store_submission_file(ctx: ServiceContext, *, phase_id: int, data: bytes) -> StoredObject:
    """Store an uploaded prediction file durably under submissions/<phase>/<uuid>."""
    return ctx.storage.put(f"submissions/{phase_id}/{uuid.uuid4().hex}", data)


def prediction_csv(ids: list[str], answers: list[str]) -> bytes:
    """Return an id,prediction CSV file (ids quoted when they need it)."""
    lines = ["id,prediction"] + [f"{_cell(i)},{a}" for i, a in zip(ids, answers)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _cell(text: str) -> str:
    """Return text quoted for CSV when it needs quoting."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def _too_large_message(limit: int) -> str:
    """Return the participant-facing message for an upload over limit bytes."""
    return f"The file is larger than this instance accepts ({limit / (1024 * 1024):.1f} MiB at most)."
