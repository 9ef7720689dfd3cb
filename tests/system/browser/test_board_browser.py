"""The ranking page in a real browser: paging, sorting, search, view switch, the phone layout, axe-core.

A phase of 48 items with two views gets 64 scored entries (some with metadata and a
second method). Screenshots at 1280 and 390 px go to /tmp/shots/ranking/ for people to
look at. axe-core (vendored under static/vendor/axe-core, never loaded by a page) is
injected by the test only and must report no serious or critical violation.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from instance_snapshot import build_snapshot, restore_snapshot
from sqlalchemy import select

from leaderboard import accounts
from leaderboard.accounts import OPERATOR
from leaderboard.models import Competition, Phase
from leaderboard.organizing import competitions, phases
from leaderboard.platform import ServiceContext
from leaderboard.submissions import accept_submission

# One worker builds the board once (board_snapshot) and every test reads its own copy of it.
pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite"), pytest.mark.xdist_group("board_browser")]

SHOTS = Path("/tmp/shots/ranking")
AXE = "/static/vendor/axe-core/axe.min.js"
VIEWS = [{"name": "Overall", "metric": "accuracy", "columns": ["answer_rate", "popularity.tail.accuracy"]},
         {"name": "Long tail", "metric": "popularity.tail.accuracy", "columns": ["popularity.tail.answer_rate"]}]
ITEMS = [{"id": f"x{i:02d}", "label": ["true", "false"][i % 2], "category": ["geo", "bio", "art"][i % 3],
          "popularity": "tail" if i % 4 else "head", "split": "private" if i % 5 == 0 else "public"}
         for i in range(48)]


def predictions(seed: int) -> bytes:
    """Return a file right on a seed-dependent share of items, abstaining on a few."""
    rows = ["id,prediction"]
    for i, item in enumerate(ITEMS):
        truth = item["label"] == "true"
        answer = "" if (i * 7 + seed) % 23 == 0 else str(truth != ((i * 31 + seed * 17) % 11 < seed % 6)).lower()
        rows.append(f"{item['id']},{answer}")
    return ("\n".join(rows) + "\n").encode()


def build_board(ctx: ServiceContext) -> None:
    """Create a competition and its open phase with 64 scored entries (48 participants, 16 second methods)."""
    competition = competitions.create_competition(ctx, slug="tail-bench", title="Tail Bench", actor=OPERATOR)
    labels = ("\n".join(json.dumps(item) for item in ITEMS) + "\n").encode()
    phase = phases.create_phase(ctx, competition_slug=competition.slug, name="Claims", labels=labels,
                                config={"task_type": "binary", "views": VIEWS, "min_slice_items": 5},
                                actor=OPERATOR)
    phase = phases.open_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    for n in range(48):
        user = accounts.register_user(ctx, email=f"p{n}@example.org", password="participant-pw",
                                      display_name=f"Participant {n:02d}")
        meta = {"model": ["llama-3-8b", "gpt-4o", "olmo-7b"][n % 3], "open_weights": n % 3 != 1,
                "parameters_b": 7 + n, "prompting": "few-shot"} if n % 2 == 0 else None
        accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(predictions(n)),
                          metadata=meta)
        if n % 3 == 0:
            accept_submission(ctx, phase_id=phase.id, user=user, filename="q.csv", method="chain-of-thought",
                              stream=io.BytesIO(predictions(n + 100)))


@pytest.fixture(scope="module")
def board_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the board's instance once for this module (scoring 64 entries is the slow part)."""
    return build_snapshot(tmp_path_factory.mktemp("board"), build_board)


@pytest.fixture
def database_url(db_backend: str, tmp_path: Path, board_snapshot: Path) -> str:
    """Return this test's own copy of the built instance (SQLite: a snapshot is a folder of files)."""
    assert db_backend == "sqlite", "the board snapshot is a SQLite file"
    return restore_snapshot(board_snapshot, tmp_path)


@pytest.fixture
def board_phase(ctx: ServiceContext) -> tuple[Competition, Phase]:
    """Return the competition and its open phase with 64 scored entries, from this test's copy."""
    competition = ctx.session.scalars(select(Competition).where(Competition.slug == "tail-bench")).one()
    phase = ctx.session.scalars(select(Phase).where(Phase.competition_id == competition.id)).one()
    return competition, phase


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """Inject axe-core from this origin (the CSP allows no inline script) and return serious/critical violations."""
    page.add_script_tag(url=AXE)
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"][:3]]}
            for v in result if v["impact"] in ("serious", "critical")]


def shot(page: Any, name: str) -> None:
    """Save a full-page screenshot under /tmp/shots/ranking/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def ranks(page: Any) -> list[str]:
    """Return the rank column of the board table as shown."""
    return page.locator("table.board-table tbody td.rank").all_inner_texts()


def test_paging_sorting_search_and_view_switch(browser_page: Any, board_phase: tuple[Competition, Phase]) -> None:
    from playwright.sync_api import expect

    _, phase = board_phase
    page = browser_page
    page.goto(f"/phases/{phase.id}/leaderboard")
    rows = page.locator("table.board-table tbody tr")
    expect(rows).to_have_count(50)
    expect(page.locator(".board-count")).to_contain_text("Entries 1–50 of 67")
    first_page = ranks(page)
    assert first_page[0] == "1" and page.locator(".badges").first.is_visible()
    shot(page, "board-page1-1280")

    page.get_by_role("link", name="Next →").click()
    expect(page).to_have_url(re.compile(r"page=2"))
    expect(rows).to_have_count(17)
    numbers = [int(r) for r in ranks(page) if r.isdigit()]
    assert numbers == sorted(numbers) and numbers[0] > max(int(r) for r in first_page if r.isdigit())

    page.goto(f"/phases/{phase.id}/leaderboard")
    header = page.locator("table.board-table thead th", has_text="Accuracy · tail")
    header.get_by_role("link").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    cells = page.locator("table.board-table tbody tr td:nth-child(5) .val").all_inner_texts()
    values = [float(v) for v in cells]
    assert values == sorted(values, reverse=True)
    page.locator("table.board-table thead th", has_text="Accuracy · tail").get_by_role("link").click()
    expect(page.locator("table.board-table thead th", has_text="Accuracy · tail")).to_have_attribute(
        "aria-sort", "ascending")

    page.goto(f"/phases/{phase.id}/leaderboard")
    page.get_by_label("Search", exact=True).fill("participant 07")
    page.get_by_role("button", name="Apply").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Participant 07")
    expect(page.get_by_label("Open weights")).to_be_hidden()  # folded away until asked for
    page.get_by_text("Filters and sort").click()
    page.get_by_label("Open weights").select_option("true")
    page.get_by_label("Search", exact=True).fill("")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"open_weights=true"))
    expect(page.get_by_label("Open weights")).to_have_value("true")  # a filter in use keeps the panel open
    assert all("open weights" in t for t in page.locator("table.board-table tbody th.entry").all_inner_texts())

    page.goto(f"/phases/{phase.id}/leaderboard")
    page.get_by_role("navigation", name="Leaderboard views").get_by_role("link", name="Long tail").click()
    expect(page.get_by_role("heading", name="Long tail")).to_be_visible()
    expect(page.locator("#ranking-rule")).to_contain_text("popularity.tail.accuracy")
    expect(page.locator("table.board-table thead th.col-value")).to_contain_text("Accuracy · tail")
    shot(page, "board-long-tail-1280")


def test_phone_layout_shows_rank_name_and_value_without_sideways_scrolling(
        chromium: Any, live_server: str, board_phase: tuple[Competition, Phase]) -> None:
    from playwright.sync_api import expect

    competition, phase = board_phase
    context = chromium.new_context(viewport={"width": 390, "height": 844}, base_url=live_server)
    page = context.new_page()
    try:
        for path, name in ((f"/phases/{phase.id}/leaderboard", "board-390"),
                           (f"/c/{competition.slug}", "competition-390"), ("/", "home-390"),
                           (f"/phases/{phase.id}", "phase-390")):
            page.goto(path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
            shot(page, name)
        page.goto(f"/phases/{phase.id}/leaderboard")
        first = page.locator("table.board-table tbody tr").first
        for cell in ("td.rank", "th.entry", "td.col-value .val", "td.col-value .ci"):
            expect(first.locator(cell)).to_be_visible()
        box = first.locator("td.col-value").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390
        expect(first.locator("td.col-extra").first).to_be_hidden()
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_axe_reports_no_serious_violation_on_the_ranking_and_competition_pages(
        chromium: Any, live_server: str, board_phase: tuple[Competition, Phase], width: int) -> None:
    competition, phase = board_phase
    context = chromium.new_context(viewport={"width": width, "height": 900}, base_url=live_server)
    page = context.new_page()
    try:
        found = {}
        for path in (f"/phases/{phase.id}/leaderboard", f"/phases/{phase.id}/leaderboard?view=Long+tail&page=2",
                     f"/c/{competition.slug}"):
            page.goto(path)
            found[path] = axe_violations(page)
        assert found == {path: [] for path in found}
    finally:
        context.close()
