"""Entries in a real browser: the upload form with method and metadata shows its progress while a slow upload runs,
a rejected file and a 409 keep what was typed, the form is disabled with the reset time when the quota is used up,
teams are formed from the pages, and every page is screenshotted (desktop and 390 px) to /tmp/shots/entries/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from leaderboard import accounts, submissions
from leaderboard.accounts import OPERATOR
from leaderboard.models import Phase, User
from leaderboard.organizing import add_baseline, competitions, phases
from leaderboard.platform import ServiceContext

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

SHOTS = Path("/tmp/shots/entries")
PASSWORD = "correct horse battery"
WIDE_ELEMENTS = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 6).map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""
"""The elements reaching past the screen's right edge (to say what makes a page scroll sideways)."""
N_ITEMS = 4000  # a ~60 KB prediction file: long enough to watch under a throttled upload


def labels(n: int = N_ITEMS) -> bytes:
    """Return a binary label file of n items, categories a/b, head/tail, a quarter private."""
    rows = [{"id": f"q{i:05d}", "label": i % 2 == 0, "category": "ab"[i % 2], "popularity": "head" if i % 3 else "tail",
             "split": "private" if i % 4 == 0 else "public"} for i in range(n)]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def predictions(n: int = N_ITEMS, wrong: int = 0) -> bytes:
    """Return a CSV answering every item, the first `wrong` wrongly."""
    return ("id,prediction\n" + "".join(f"q{i:05d},{str((i % 2 == 0) != (i < wrong)).lower()}\n"
                                         for i in range(n))).encode()


def shot(page: Any, name: str, *, width: int | None = None, part: str | None = None) -> None:
    """Save a full-page screenshot (or of one part of the page), at another width when asked."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    if width is not None:
        page.set_viewport_size({"width": width, "height": 844})
        overflow = page.evaluate("() => document.documentElement.scrollWidth")
        wide = page.evaluate(WIDE_ELEMENTS)
        assert overflow <= width, f"{name}: the page is {overflow} px wide on a {width}-px screen: {wide}"
    page.evaluate("() => window.scrollTo(0, 0)")  # the sticky bar stays at the top of a full-page shot
    if part is not None:
        page.locator(part).first.screenshot(path=str(SHOTS / f"{name}.png"))
    else:
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    if width is not None:
        page.set_viewport_size({"width": 1280, "height": 900})


def log_in(page: Any, email: str) -> None:
    """Log in through the form."""
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login" not in url)


@pytest.fixture
def setup(ctx: ServiceContext) -> tuple[Phase, User, User]:
    """Return an open phase (3 per day, max_methods 2, final_selections 1) and two participants, one of them
    with a scored submission and metadata, and a baseline with metadata."""
    competitions.create_competition(ctx, slug="colota", title="CoLoTa long-tail QA", actor=OPERATOR)
    phase = phases.create_phase(ctx, competition_slug="colota", name="Claims", labels=labels(), actor=OPERATOR,
                                max_per_day=3, config={"task_type": "binary", "max_methods": 2,
                                                       "final_selections": 1, "min_slice_items": 5})
    phase = phases.open_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    dana = accounts.register_user(ctx, email="dana@example.org", password=PASSWORD, display_name="Dana Research")
    eli = accounts.register_user(ctx, email="eli@example.org", password=PASSWORD, display_name="Eli K")
    submissions.accept_submission(ctx, phase_id=phase.id, user=eli, filename="e.csv",
                                  stream=predictions(wrong=900), method="zero-shot",
                                  metadata={"model": "Mistral-7B", "parameters_b": 7, "open_weights": True,
                                            "prompting": "zero-shot"})
    add_baseline(ctx, phase_id=phase.id, name="GPT-4o", filename="g.csv", stream=predictions(wrong=300),
                 actor=OPERATOR, metadata={"model": "GPT-4o", "open_weights": False, "prompting": "few-shot",
                                           "url": "https://openai.com"})
    return phase, dana, eli


def test_upload_form_progress_metadata_and_the_quota_used_up(browser_page: Any, setup: Any) -> None:
    from playwright.sync_api import expect

    phase, dana, _ = setup
    page = browser_page
    log_in(page, dana.email)
    page.goto(f"/phases/{phase.id}")
    page.get_by_label("Method").fill("CoT + Wikidata")
    page.locator("summary", has_text="About this method").click()
    page.get_by_label("Model", exact=True).fill("Llama-3-8B-Instruct")
    page.get_by_label("Parameters (billions)").fill("8")
    page.get_by_label("Open weights").select_option("yes")
    page.get_by_label("Uses a knowledge graph").select_option("yes")
    page.get_by_label("Prompting").select_option("chain-of-thought")
    page.get_by_label("Link (paper or code)").fill("https://example.org/paper")
    page.set_input_files("#file", files=[{"name": "preds.csv", "mimeType": "text/csv",
                                          "buffer": predictions(wrong=40)}])
    shot(page, "upload-form-desktop")
    shot(page, "upload-card-desktop", part="#submit")
    shot(page, "upload-form-390", width=390)
    shot(page, "upload-card-390", width=390, part="#submit")

    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 20, "downloadThroughput": -1,
                                                  "uploadThroughput": 16 * 1024})
    button = page.get_by_role("button", name=re.compile("Upload and score|Uploading"))
    button.click()
    expect(button).to_be_disabled()
    expect(page.locator(".upload-progress")).to_be_visible()
    expect(page.locator(".upload-progress-text")).to_contain_text(re.compile(r"Uploading… \d+% of \d+ KB"))
    page.wait_for_function("() => document.querySelector('.upload-progress progress').value > 0")
    shot(page, "upload-in-progress", part="#submit")
    page.wait_for_url(re.compile(r"/submissions/\d+$"), timeout=60_000)
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1,
                                                  "uploadThroughput": -1})
    expect(page.locator("h1 .badge-sub-scored")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name="Your entries on the ranking")).to_be_visible()
    shot(page, "submission-with-ranks")

    page.goto(f"/phases/{phase.id}")  # a third method past max_methods 2: refused, nothing typed is lost
    page.get_by_label("Method").fill("second")
    page.set_input_files("#file", files=[{"name": "p.csv", "mimeType": "text/csv", "buffer": predictions(wrong=9)}])
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+$"))
    page.goto(f"/phases/{phase.id}")
    page.get_by_label("Method").fill("third")
    page.set_input_files("#file", files=[{"name": "p.csv", "mimeType": "text/csv", "buffer": predictions()}])
    page.get_by_role("button", name="Upload and score").click()
    expect(page.get_by_text("This phase allows at most 2 methods per participant")).to_be_visible()
    expect(page.get_by_label("Method")).to_have_value("third")
    shot(page, "upload-refused-max-methods")
    shot(page, "upload-refused-max-methods-top", part="main")

    page.get_by_label("Method").fill("second")  # the third upload of today: the quota is used up after it
    page.set_input_files("#file", files=[{"name": "p.csv", "mimeType": "text/csv", "buffer": predictions(wrong=5)}])
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+$"))
    page.goto(f"/phases/{phase.id}")
    expect(page.get_by_text("You have used all of today’s submissions")).to_be_visible()
    expect(page.get_by_role("button", name="Upload and score")).to_be_disabled()
    expect(page.locator(".quota-used-up")).to_contain_text("You can submit again from")
    shot(page, "phase-quota-used-up")
    shot(page, "phase-quota-used-up-card", part="#submit")
    shot(page, "phase-quota-used-up-390", width=390, part="#submit")

    page.locator(".history-table tbody tr").first.get_by_role("button", name=re.compile("^Select")).click()
    expect(page.get_by_text("is now selected for the final ranking")).to_be_visible()
    shot(page, "phase-selection", part="#history")
    shot(page, "phase-selection-390", width=390, part="#history")

    page.goto(f"/phases/{phase.id}/leaderboard")
    shot(page, "board-with-metadata")
    shot(page, "board-with-metadata-390", width=390)


def test_team_pages_create_join_and_show_the_code(browser_page: Any, setup: Any, chromium: Any,
                                                  live_server: str) -> None:
    from playwright.sync_api import expect

    phase, dana, _ = setup
    page = browser_page
    log_in(page, dana.email)
    page.goto(f"/phases/{phase.id}")
    page.get_by_role("link", name="Form or join a team").click()
    shot(page, "team-choose")
    shot(page, "team-choose-390", width=390)
    page.get_by_label("Team name").fill("Long Tail Lab")
    page.get_by_role("button", name="Create team").click()
    expect(page.get_by_role("heading", name="Long Tail Lab")).to_be_visible()
    code = page.locator("#invite-code").inner_text()

    other = chromium.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server).new_page()
    with_teammate = accounts_page(other, "frank@example.org")
    with_teammate.goto("/c/colota/team")
    with_teammate.get_by_label("Invite code").fill(code)
    with_teammate.get_by_role("button", name="Join team").click()
    expect(with_teammate.get_by_text("You joined “Long Tail Lab”")).to_be_visible()
    with_teammate.goto(f"/phases/{phase.id}")
    expect(with_teammate.get_by_text("Submitting as team")).to_be_visible()
    with_teammate.set_input_files("#file", files=[{"name": "p.csv", "mimeType": "text/csv",
                                                   "buffer": predictions(wrong=100)}])
    with_teammate.get_by_label("Method").fill("rag")
    with_teammate.get_by_role("button", name="Upload and score").click()
    with_teammate.wait_for_url(re.compile(r"/submissions/\d+$"))
    other.context.close()

    page.reload()
    expect(page.get_by_text("Frank Team")).to_be_visible()
    expect(page.get_by_text("nobody can leave it any more")).to_be_visible()
    shot(page, "team-page")
    shot(page, "team-page-390", width=390)


def accounts_page(page: Any, email: str) -> Any:
    """Register a participant through the form and return the page, logged in."""
    page.goto("/register")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Display name").fill("Frank Team")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Repeat password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(lambda url: "/register" not in url)
    return page
