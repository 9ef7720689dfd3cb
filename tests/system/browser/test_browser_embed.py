"""A board embedded in another site: Chromium renders the embed in an iframe of a page from another origin.

The host page is served by a second tiny HTTP server on another loopback port (another
origin). The embed's rows render inside the frame; the ranking page itself, framed the
same way, is refused by the browser (frame-ancestors 'none' and X-Frame-Options everywhere else).
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from leaderboard.submissions import accept_submission

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]


@pytest.fixture
def host_site() -> Iterator[tuple[str, dict[str, str]]]:
    """Serve pages from a dict (path -> HTML) on another loopback port; yield its base URL and the dict."""
    pages: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = pages.get(self.path, "not found").encode()
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            """Stay quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", pages
    server.shutdown()
    server.server_close()


def test_another_origin_frames_the_embed_but_not_the_ranking_page(ctx, make_phase, make_user, make_predictions,
                                                                   chromium, live_server, host_site) -> None:
    phase = make_phase()
    for name, wrong in (("Ada Lovelace", 0), ("Bob Bunsen", 1)):
        accept_submission(ctx, phase_id=phase.id, user=make_user(display_name=name), filename="p.csv",
                          stream=io.BytesIO(make_predictions(wrong=wrong)))
    base, pages = host_site
    assert base != live_server  # another origin
    pages["/"] = (f'<!doctype html><title>Host</title><h1>Our lab</h1>'
                  f'<iframe id="embed" src="{live_server}/phases/{phase.id}/embed?n=5" width="600" height="300">'
                  f'</iframe><iframe id="board" src="{live_server}/phases/{phase.id}/leaderboard" width="600" '
                  f'height="300"></iframe>')
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(base + "/", wait_until="load")
        embed = page.frame_locator("#embed")
        rows = embed.locator("tr.embed-row")
        rows.first.wait_for()
        names = [text.strip() for text in embed.locator("tr.embed-row th").all_inner_texts()]
        assert names[:2] == ["Ada Lovelace", "Bob Bunsen"]
        assert embed.locator("a", has_text="Full leaderboard").get_attribute("href").endswith(
            f"/phases/{phase.id}/leaderboard")
        # refused: the ranking page never renders framed (Chromium shows its error page instead)
        assert page.frame_locator("#board").locator("table").count() == 0
        assert not any(f.url.endswith(f"/phases/{phase.id}/leaderboard") and f.locator("table").count()
                       for f in page.frames)
    finally:
        context.close()
