"""Read an upload without ever holding more than its size limit: one helper for scoring and the web app.

``read_bounded`` reads a stream (or takes bytes) and raises ``FileTooLarge`` as soon as
the content passes the limit, having read at most one chunk past it. ``FileTooLarge``
is a ``PredictionFileError`` carrying the participant's message (docs/FORMATS.md, Validation problems) and the
limit, so a caller with its own wording can say it its way.
"""

from __future__ import annotations

import io
from typing import IO

from scoring.types import PredictionFileError, Problem

CHUNK = 1 << 20


class FileTooLarge(PredictionFileError):
    """A file past the size limit; ``limit`` is that limit in bytes."""

    def __init__(self, limit: int) -> None:
        message = f"The file is too large: the limit is {size_text(limit)} uncompressed."
        super().__init__([Problem(line=None, id=None, message=message)], 1)
        self.limit = limit


def read_bounded(source: IO[bytes] | bytes | bytearray | memoryview, *, limit: int) -> bytes:
    """Return the whole content, or raise FileTooLarge once it passes ``limit`` bytes (reading at most limit + 1)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        buffer = io.BytesIO()
        while buffer.tell() <= limit:
            chunk = source.read(min(CHUNK, limit + 1 - buffer.tell()))
            if not chunk:
                break
            buffer.write(chunk)
        data = buffer.getvalue()
    if len(data) > limit:
        raise FileTooLarge(limit)
    return data


def size_text(n: int) -> str:
    """Return a byte count as people read it (``100 MiB``, ``1,234 bytes``)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n:,} bytes"
