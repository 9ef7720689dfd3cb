"""Loopback ports for servers the tests start: find a free one, wait until one listens."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest


def free_port() -> int:
    """Return a loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, log: Path | None = None, *, seconds: float = 60) -> None:
    """Wait until something accepts connections on port; fail (with the log's tail) if process exits first."""
    tail = (lambda: ":\n" + log.read_text()[-3000:]) if log is not None else (lambda: "")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{process.args[0]} exited with {process.returncode}{tail()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"nothing listened on port {port} within {seconds:g} s{tail()}")
