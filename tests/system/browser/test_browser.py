"""A real browser walks the participant's and the organizer's path through the demo instance.

Register, open the open phase, upload a broken file and read its line-numbered problems,
upload a good one, watch it get scored, find it on the ranking with its per-category and
head/tail tables; then the organizer closes the phase and the private split
appears. Screenshots of every page go to screenshots/ (git-ignored) for people to look at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from leaderboard.accounts import phase_status
from leaderboard.demo import ORGANIZER_EMAIL, PASSWORD, install_demo
from leaderboard.platform import ServiceContext

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

BAD = b"id,prediction\n{first},maybe\n{second},true\n{second},false\nno-such-id,true\n"


def predictions(labels: list[dict[str, Any]]) -> bytes:
    """Return a valid CSV with confidences: right on head items, wrong on every third tail item."""
    rows = ["id,prediction,confidence"]
    for n, record in enumerate(labels):
        truth = str(record["label"]).lower() in ("true", "1", "yes")
        wrong = record.get("popularity") == "tail" and n % 3 == 0
        rows.append(f"{record['id']},{str(truth != wrong).lower()},{0.55 if wrong else 0.9}")
    return ("\n".join(rows) + "\n").encode()


def test_participant_then_organizer_journey(browser_page: Any, ctx: ServiceContext,
                                            screenshot: Callable[[Any, str], Any]) -> None:
    from playwright.sync_api import expect

    competition, _ = install_demo(ctx)
    phase = next(p for p in competition.phases if phase_status(p) == "open" and p.has_private_split)
    labels = [json.loads(line) for line in ctx.labels.read_bytes(phase.labels_key).splitlines() if line.strip()]
    page = browser_page

    page.goto("/")
    expect(page.get_by_role("link", name=competition.title)).to_be_visible()
    screenshot(page, "home")

    page.get_by_role("link", name="Register").click()
    page.get_by_label("Email").fill("dana@example.org")
    page.get_by_label("Display name").fill("Dana Research")
    page.get_by_label("Password", exact=True).fill("dana-password-1")
    page.get_by_label("Repeat password").fill("dana-password-1")
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_text("Your account is ready")).to_be_visible()

    page.get_by_role("link", name=competition.title).click()
    expect(page.get_by_role("navigation", name="Phases")).to_be_visible()
    screenshot(page, "competition")

    page.goto(f"/phases/{phase.id}")
    expect(page.get_by_role("heading", name="Submit predictions")).to_be_visible()
    screenshot(page, "phase")

    bad = BAD.replace(b"{first}", labels[0]["id"].encode()).replace(b"{second}", labels[1]["id"].encode())
    page.set_input_files("#file", files=[{"name": "broken.csv", "mimeType": "text/csv", "buffer": bad}])
    page.get_by_label("Description (optional)").fill("first try")
    page.get_by_role("button", name="Upload and score").click()
    errors = page.locator(".errors-table tbody tr")
    expect(errors).to_have_count(3)
    assert [errors.nth(i).locator("td").first.inner_text() for i in range(3)] == ["2", "4", "5"]
    expect(page.get_by_label("Description (optional)")).to_have_value("first try")
    screenshot(page, "phase-errors")

    page.set_input_files("#file", files=[{"name": "good.csv", "mimeType": "text/csv", "buffer": predictions(labels)}])
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+$"))
    expect(page.locator("h1 .badge-sub-scored")).to_be_visible(timeout=30_000)  # the page refreshes itself
    expect(page.get_by_role("heading", name="Public split")).to_be_visible()
    expect(page.get_by_role("heading", name="Head versus tail").first).to_be_visible()
    expect(page.locator(".metric-card-primary .ci")).to_have_text(re.compile(r"\[\d\.\d{4}, \d\.\d{4}\]"))
    expect(page.get_by_role("heading", name="Private split")).to_have_count(0)
    screenshot(page, "submission")

    page.get_by_role("link", name="View the ranking").click()
    ranking = page.locator("table.board-table")
    expect(ranking.get_by_text("Dana Research", exact=True)).to_be_visible()
    expect(page.locator("table.headtail").get_by_text("Dana Research")).to_be_visible()
    expect(page.locator("table.breakdown").first.get_by_text("Dana Research")).to_be_visible()
    expect(page.locator(".tag-baseline").first).to_be_visible()
    expect(page.locator("#ranking-rule")).to_contain_text("public split")
    screenshot(page, "ranking")

    page.get_by_role("button", name="Log out").click()
    page.goto("/login")
    page.get_by_label("Email").fill(ORGANIZER_EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Organizer", exact=True).click()
    page.get_by_role("link", name=competition.title).first.click()
    screenshot(page, "organizer")
    row = page.locator("tbody tr", has=page.get_by_role("link", name=phase.name))
    row.get_by_role("button", name="Close now").click()  # confirm() is accepted by the fixture
    expect(page.get_by_text("The phase is closed")).to_be_visible()

    page.goto(f"/phases/{phase.id}/leaderboard")
    expect(page.locator("#ranking-rule")).to_contain_text("private split")
    expect(page.get_by_text("hidden until the phase closes")).to_have_count(0)
    screenshot(page, "ranking-closed")
