"""The long-tail charts draw in a real browser under the app's CSP: a submission's three charts and the overlay.

Chromium reports each blocked script or style as a ``securitypolicyviolation`` event; the
test records them, waits for Chart.js to have drawn every canvas of the page, and ticks a
sixth entry on the ranking page so that the overlay fetches it and rebuilds its table.
"""

from __future__ import annotations

from typing import Any

import pytest
from charts_world import answers, labels, upload

from leaderboard.models import User
from leaderboard.platform import ServiceContext

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""
DRAWN = "(n) => window.Chart && document.querySelectorAll('canvas[data-chart]').length === n && " \
        "Array.from(document.querySelectorAll('canvas[data-chart]')).every(c => Chart.getChart(c))"


@pytest.fixture
def watched(browser_page: Any) -> tuple[Any, list[str]]:
    """Return the page and a list that collects CSP violations, console errors and failed requests."""
    problems: list[str] = []
    browser_page.add_init_script(RECORD_VIOLATIONS)
    browser_page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    browser_page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    browser_page.on("response", lambda r: problems.append(f"{r.status} for {r.url}") if r.status >= 400 else None)
    return browser_page, problems


def test_the_charts_draw_under_the_csp_and_the_overlay_fetches_a_ticked_entry(
        ctx: ServiceContext, make_phase: Any, make_user: Any, watched: tuple[Any, list[str]]) -> None:
    page, problems = watched
    phase = make_phase(labels=labels())
    users: list[User] = [make_user(display_name=f"Lab {k}", password="correct horse battery") for k in range(6)]
    subs = [upload(ctx, phase, user, answers(20 + k, skill=1.0 - 0.07 * k)) for k, user in enumerate(users)]
    page.goto("/login")
    page.get_by_label("Email").fill(users[0].email)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login" not in url)

    page.goto(f"/submissions/{subs[0].id}")
    page.wait_for_function(DRAWN, arg=3)
    kinds = page.eval_on_selector_all("canvas[data-chart]", "cs => cs.map(c => c.dataset.chart)")
    assert kinds == ["popularity", "risk", "reliability"]
    lines = page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=popularity]'))"
                          ".data.datasets.filter(d => !d.band).map(d => d.data.length)")
    assert lines == [10, 10]  # accuracy and answer rate over the ten bins

    page.goto(f"/phases/{phase.id}/leaderboard")
    page.wait_for_function(DRAWN, arg=1)
    picks = page.locator(".curve-picks input[type=checkbox]")
    assert picks.count() == 6 and page.locator(".curve-picks input:checked").count() == 5
    unticked = page.locator(".curve-picks input:not(:checked)")
    with page.expect_response(lambda r: "/leaderboard/curves?" in r.url):
        unticked.first.check()
    page.wait_for_function("() => document.querySelectorAll('#board-curves-table thead th').length === 7")
    drawn = page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=board]'))"
                          ".data.datasets.filter(d => !d.band).length")
    assert drawn == 6
    problems.extend(page.evaluate("window.__cspViolations || []"))
    assert problems == []
