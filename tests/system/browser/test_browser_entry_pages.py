"""Entry pages and /compare in a real browser: a ranking row's details link, the entry page, the comparison after
close, each screenshotted at 1280 and 390 px (no sideways scrolling) to /tmp/shots/entry_pages/."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from leaderboard.accounts import OPERATOR
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

SHOTS = Path("/tmp/shots/entry_pages")
N = 300


def labels() -> bytes:
    """Return a binary label file of N items in three categories, head and tail, a third private."""
    rows = [{"id": f"q{i:04d}", "label": i % 2 == 0, "category": "abc"[i % 3],
             "popularity": "head" if i % 4 else "tail", "split": "private" if i % 3 == 0 else "public"}
            for i in range(N)]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def predictions(wrong: int) -> bytes:
    """Return a CSV answering every item, every `wrong`-th one wrongly."""
    return ("id,prediction\n" + "".join(f"q{i:04d},{str((i % 2 == 0) != (i % wrong == 1)).lower()}\n"
                                         for i in range(N))).encode()


def shots(page: Any, name: str) -> None:
    """Save full-page screenshots at 1280 and 390 px; fail when the page scrolls sideways at 390."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 844})
        page.wait_for_function("w => Array.from(document.querySelectorAll('canvas')).every(c => "
                               "c.getBoundingClientRect().right <= w)", arg=width)  # Chart.js resizes on a frame
        overflow = page.evaluate("() => document.documentElement.scrollWidth")
        assert overflow <= width, f"{name}: {overflow} px wide on a {width}-px screen"
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_entry_page_and_comparison_after_close(ctx, make_phase, make_user, browser_page, live_server):
    phase = make_phase(labels=labels(), private=True, config={"task_type": "binary"}, name="Final")
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    for user, wrong, method in ((alice, 5, "zero-shot"), (alice, 9, "zero-shot"), (bob, 4, "retrieval")):
        accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(predictions(wrong)),
                          method=method, metadata={"model_id": "org/model-7b", "url": "https://example.org/paper",
                                                   "notes": "A short description of the method."})
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()
    page = browser_page
    page.goto(f"/phases/{phase.id}/leaderboard")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("table.board-table").screenshot(path=str(SHOTS / "ranking-rows-1280.png"))  # the details links
    page.get_by_role("link", name="details of alice").click()
    page.wait_for_url(f"**/phases/{phase.id}/entries/**")
    assert page.get_by_role("heading", level=1).inner_text().startswith("alice")
    assert page.locator("table.entry-history tbody tr").count() == 2  # two uploads, each a new best
    assert "org/model-7b" in page.content()
    shots(page, "entry")
    page.locator("a.compare-link").click()
    page.wait_for_url("**/compare?**")
    assert "McNemar" in page.locator("p.significance").inner_text()
    shots(page, "compare")
