"""A webhook receiver on loopback for the notify tests: records every POST, answers statuses it is told.

``Receiver`` is a context manager; ``answers`` is a list of statuses given to the next
POSTs in order (then 200). ``wait_for`` waits (up to a deadline, never a timed assertion)
until n POSTs have arrived. ``by_delivery`` dedupes by the delivery id header, as a
receiver should.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Post:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes
    status: int


class Receiver:
    """A ThreadingHTTPServer on 127.0.0.1 that records POSTs."""

    def __init__(self, answers: list[int] | None = None) -> None:
        self.answers = list(answers or [])
        self.posts: list[Post] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.arrived:
                    status = receiver.answers.pop(0) if receiver.answers else 200
                    receiver.posts.append(Post(self.path, dict(self.headers.items()), body, status))
                    receiver.arrived.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                """Stay quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"

    def __enter__(self) -> Receiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def by_delivery(self) -> dict[str, Post]:
        """Return the accepted (2xx) posts keyed by delivery id (a repeat overwrites, as a deduping receiver)."""
        return {p.headers["X-Tailboard-Delivery"]: p for p in self.posts if 200 <= p.status < 300}

    def wait_for(self, n: int, *, seconds: float = 30) -> list[Post]:
        """Return the posts once at least n have arrived, waiting up to seconds (then fail loudly)."""
        deadline = time.monotonic() + seconds
        with self.arrived:
            while len(self.posts) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} webhook posts, got {len(self.posts)}")
                self.arrived.wait(left)
            return list(self.posts)
