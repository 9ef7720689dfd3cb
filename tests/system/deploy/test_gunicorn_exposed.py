"""gunicorn with deploy/gunicorn.conf.py as a directly exposed server: an honest access log,
no control-socket error without a home, and answers while slow clients hold connections.

One gunicorn runs on loopback for the module, as the service user would run it: HOME
is not a writable folder and XDG_RUNTIME_DIR is unset.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port, wait_for_port

PROJECT_ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
SLOW_CLIENTS = 12

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path, Path]]:
    """Run gunicorn with the deploy config; yield its port, its access log and its error output."""
    tmp = tmp_path_factory.mktemp("exposed")
    home = tmp / "home"
    home.write_text("")  # a home no one can create .gunicorn/ in, even root (ProtectHome=yes for the service)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAILBOARD_", "GUNICORN_", "XDG_"))}
    env.update({"TAILBOARD_DATA_DIR": str(tmp / "data"), "SECRET_KEY": "exposed-test", "HOME": str(home),
                "DATABASE_URL": f"sqlite:///{tmp / 'data' / 'tailboard.sqlite3'}", "WEB_CONCURRENCY": "2",
                "GUNICORN_THREADS": "16",  # as deploy/README.md says to run a server exposed without nginx
                "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_ACCESSLOG": str(tmp / "access.log")})
    (tmp / "data").mkdir()
    migrate = subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=PROJECT_ROOT, env=env,
                             capture_output=True, text=True, check=False)
    assert migrate.returncode == 0, migrate.stderr
    errors = tmp / "gunicorn.err"
    with errors.open("wb") as out:
        process = subprocess.Popen([str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "app:app"],
                                   cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, errors)
        yield port, tmp / "access.log", errors
    finally:
        process.terminate()
        process.wait(timeout=60)


def get(port: int, path: str, *, timeout: float = 30) -> int:
    """Send GET path (bytes as given) and return the status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def logged_lines(log: Path, *needles: str) -> list[str]:
    """Return the log's lines once every needle is in it (gunicorn logs a request after answering it)."""
    for _ in range(100):
        text = log.read_text() if log.exists() else ""
        if all(needle in text for needle in needles):
            break
        threading.Event().wait(0.1)
    return text.splitlines()


def test_an_encoded_line_break_in_the_url_cannot_forge_an_access_log_line(server: tuple[int, Path, Path]) -> None:
    port, access_log, _ = server
    get(port, "/%0d%0a127.0.0.1%20%22GET%20/admin%20HTTP/1.1%22%20200%20forged")
    get(port, "/after")
    lines = logged_lines(access_log, "forged", "/after")
    assert not any(line.startswith("127.0.0.1 \"GET /admin") for line in lines)
    forged = [line for line in lines if "forged" in line]
    assert len(forged) == 1 and "\\x0d\\x0a127.0.0.1 \\x22GET /admin" in forged[0]
    assert any('"GET /after HTTP/1.1" 404' in line for line in lines)


def test_no_control_socket_error_when_the_home_is_not_writable(server: tuple[int, Path, Path]) -> None:
    _, _, errors = server
    assert get(server[0], "/") == 200
    text = errors.read_text().lower()
    assert "control" not in text and "permission denied" not in text, text


def test_a_normal_request_is_answered_while_twelve_slow_uploads_trickle_one_byte_a_second(
        server: tuple[int, Path, Path]) -> None:
    port = server[0]
    stop = threading.Event()
    head = (b"POST /login HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 100000\r\n\r\n")
    opened: list[socket.socket] = []

    def trickle() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            opened.append(sock)
            sock.sendall(head)
            while not stop.wait(1.0):
                try:
                    sock.sendall(b"x")
                except OSError:
                    return

    clients = [threading.Thread(target=trickle, daemon=True) for _ in range(SLOW_CLIENTS)]
    try:
        for client in clients:
            client.start()
        stop.wait(3.0)  # every slow upload is now inside a worker thread, which the app makes read its body
        assert len(opened) == SLOW_CLIENTS
        # With 2 threads per worker (the old setting) these requests were never answered while the uploads lasted.
        assert [get(port, "/", timeout=30) for _ in range(5)] == [200] * 5
    finally:
        stop.set()
        for client in clients:
            client.join(timeout=15)
