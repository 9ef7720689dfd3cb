"""Playwright fixtures: the app served over real HTTP in a thread, and Debian's Chromium.

Never ``playwright install``: the browser is /usr/bin/chromium (``apt-get install chromium``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[3] / "screenshots"


@pytest.fixture
def live_server(app: Any) -> Iterator[str]:
    """Serve the app on 127.0.0.1 at a free port in a thread; yield its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Launch Debian's Chromium headless through Playwright; skip when it is not installed."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(chromium: Any, live_server: str) -> Iterator[Any]:
    """Return a fresh page (own cookies) at a laptop-sized viewport; dialogs are accepted."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def screenshot() -> Any:
    """Return shot(page, name): save a full-page screenshot to screenshots/<name>.png."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def shot(page: Any, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return shot
