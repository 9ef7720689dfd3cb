"""Issue 20 in a real browser: an organizer uploads a public file on the phase's files page and changes the
breakdowns on its edit page; both pages pass axe-core (serious/critical) and do not scroll sideways at 1280/390 px."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from leaderboard import accounts
from leaderboard.organizing import competitions
from tests.conftest import TINY_ITEMS, tiny_labels
from tests.system.browser.test_browser_core_flow import _axe

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

PASSWORD = "phase-files-password"
SHOTS = Path("/tmp/shots/phase_files")


def _check(page: Any, name: str) -> None:
    """Assert no serious axe violation and no sideways scrolling at both widths; screenshot."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert _axe(page) == [], name
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width, f"{name} is {wide} px wide at {width} px"
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_public_files_and_breakdowns_in_the_browser(ctx: Any, make_phase: Any, browser_page: Any,
                                                    tmp_path: Path) -> None:
    organizer = accounts.register_user(ctx, email="files@example.org", password=PASSWORD, is_organizer=True)
    competition = competitions.create_competition(ctx, slug="files", title="Files", description="", actor=organizer)
    items = [{**item, "source": "wiki" if n % 2 else "news"} for n, item in enumerate(TINY_ITEMS)]
    phase = make_phase(competition, labels=tiny_labels(items=items))
    page = browser_page
    page.goto("/login")
    page.get_by_label("Email").fill("files@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login" not in url)

    page.goto(f"/organizer/phases/{phase.id}/edit")
    page.get_by_role("link", name="Public files of this phase").click()
    readme = tmp_path / "README.md"
    readme.write_text("# How to take part\n")
    page.get_by_label("File", exact=True).set_input_files(str(readme))
    page.get_by_role("button", name="Upload").click()
    page.get_by_text("Done: added the public file README.md.").wait_for()
    assert page.get_by_role("button", name="Remove README.md").count() == 1
    _check(page, "files")

    page.goto(f"/organizer/phases/{phase.id}/edit")
    page.get_by_label("Breakdown fields").select_option(["category", "source"])
    _check(page, "edit-breakdowns")
    page.get_by_role("button", name="Save breakdowns and re-score").click()
    page.wait_for_url(lambda url: "/organizer/jobs/" in url)
    page.get_by_text("Breakdowns saved; every submission is being re-scored.").wait_for()
