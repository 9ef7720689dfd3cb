"""A streaming multipart/form-data body that reports progress while requests reads it.

requests-toolbelt's MultipartEncoderMonitor is used when it is installed; otherwise a
small reader streams the same body, so a file is never held in memory in full.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable
from typing import BinaryIO

try:
    from requests_toolbelt.multipart.encoder import MultipartEncoder, MultipartEncoderMonitor
except ImportError:  # optional: the fallback below streams the same body
    MultipartEncoder = None  # type: ignore[assignment,misc]

Progress = Callable[[int, int], None]


def multipart_body(
    handle: BinaryIO, filename: str, fields: dict[str, str], progress: Progress | None
) -> tuple[BinaryIO, str]:
    """Return a readable body with a known length, and its Content-Type header."""
    if MultipartEncoder is not None:
        encoder = MultipartEncoder(fields={**fields, "file": (filename, handle, "application/octet-stream")})
        callback = (lambda monitor: progress(monitor.bytes_read, monitor.len)) if progress else None
        monitor = MultipartEncoderMonitor(encoder, callback)
        return monitor, monitor.content_type  # type: ignore[return-value]
    body = StreamingMultipart(handle, filename, fields, progress)
    return body, body.content_type  # type: ignore[return-value]


class StreamingMultipart(io.RawIOBase):
    """Text fields, then the file part read in chunks as the body is consumed."""

    def __init__(self, handle: BinaryIO, filename: str, fields: dict[str, str], progress: Progress | None) -> None:
        super().__init__()
        boundary = uuid.uuid4().hex
        self.content_type = f"multipart/form-data; boundary={boundary}"
        head = b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value.encode() + b"\r\n"
            for name, value in fields.items()
        )
        safe_name = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        head += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe_name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        handle.seek(0, io.SEEK_END)
        size = handle.tell()
        handle.seek(0)
        self._parts: list[BinaryIO] = [io.BytesIO(head), handle, io.BytesIO(f"\r\n--{boundary}--\r\n".encode())]
        self.len = len(head) + size + len(self._parts[2].getvalue())  # type: ignore[attr-defined]
        self._read = 0
        self._progress = progress

    def readable(self) -> bool:
        """Return True: this is a readable stream."""
        return True

    def read(self, size: int = -1) -> bytes:
        """Return up to size bytes of the body (all of the rest when size < 0)."""
        chunks = []
        want = self.len if size is None or size < 0 else size
        while want > 0 and self._parts:
            chunk = self._parts[0].read(want)
            if not chunk:
                self._parts.pop(0)
                continue
            chunks.append(chunk)
            want -= len(chunk)
        data = b"".join(chunks)
        self._read += len(data)
        if self._progress:
            self._progress(self._read, self.len)
        return data
