"""A visitor reads a ranked entry's submission after close in a real browser: the bucket curve, risk–coverage and
calibration drawn, screenshotted at 1280 and 390 px (no sideways scrolling) to /tmp/shots/visitor_submission/."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from leaderboard.accounts import OPERATOR
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission
from tests.web.test_bucket_curve import labels, upload

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

SHOTS = Path("/tmp/shots/visitor_submission")
DRAWN = "(n) => window.Chart && document.querySelectorAll('canvas[data-chart]').length === n && " \
        "Array.from(document.querySelectorAll('canvas[data-chart]')).every(c => Chart.getChart(c))"


def test_visitor_sees_the_ranked_submissions_charts_after_close(ctx, make_phase, make_user, browser_page):
    phase = make_phase(labels=labels(), name="Final")
    alice = make_user(display_name="alice")
    ranked = upload(ctx, phase, alice)
    older = accept_submission(ctx, phase_id=phase.id, user=alice, filename="p.csv",
                              stream=io.BytesIO(b"id,prediction\nb000,true\n"))
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()
    page = browser_page
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(f"/submissions/{ranked.id}")
    page.wait_for_function(DRAWN, arg=3)
    ticks = page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=popularity]'))"
                          ".scales.x.ticks.map(t => t.label)")
    assert ticks == ["tail", "head"]  # the axis names the buckets
    assert "alice" in page.locator("p.visitor-note").inner_text() and errors == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 844})
        page.wait_for_function("w => Array.from(document.querySelectorAll('canvas')).every(c => "
                               "c.getBoundingClientRect().right <= w)", arg=width)  # Chart.js resizes on a frame
        overflow = page.evaluate("() => document.documentElement.scrollWidth")
        assert overflow <= width, f"{overflow} px wide on a {width}-px screen"
        page.screenshot(path=str(SHOTS / f"submission-{width}.png"), full_page=True)
    page.goto(f"/submissions/{older.id}")
    assert "/login" in page.url  # not the ranked one: log in
