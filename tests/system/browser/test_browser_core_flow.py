"""Issue 20 item 9: the core pages fit a laptop (1280 px) and a phone (390 px) and pass axe-core.

A participant's phase page (with a failed upload), the home and competition pages, the account page,
the organizer's dashboard, competition, submissions, phase edit, job, audit, import and baseline
pages are opened at both widths (the ranking page has its own browser test): the page itself never scrolls
sideways (wide tables scroll in their own focusable, labelled region), and axe-core (vendored
under static/vendor/axe-core, injected by the test only) reports no serious or critical
violation. Screenshots go to /tmp/shots/core/ for people to look at.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leaderboard import accounts
from leaderboard.models import Competition, Phase, User
from leaderboard.operations import jobs
from leaderboard.organizing import competitions, phases
from leaderboard.organizing.phase_imports import import_phase
from leaderboard.platform import ServiceContext, SubmissionInvalid
from leaderboard.submissions import accept_submission

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

SHOTS = Path("/tmp/shots/core")
AXE = "/static/vendor/axe-core/axe.min.js"
DEMO = Path(__file__).resolve().parents[3] / "leaderboard" / "demo"
PASSWORD = "core-flow-password"
WIDTHS = (1280, 390)


def _answers(ctx: ServiceContext, phase: Phase, every: int) -> bytes:
    """Return a prediction file right on all but every n-th item."""
    import json

    records = [json.loads(line) for line in ctx.labels.read_bytes(phase.labels_key).splitlines()]
    rows = [f"{r['id']},{str(r['label']).lower() if i % every else str(not r['label']).lower()}"
            for i, r in enumerate(records)]
    return ("id,prediction\n" + "\n".join(rows) + "\n").encode()


@pytest.fixture
def world(ctx: ServiceContext) -> Iterator[tuple[User, User, Competition, Phase, int]]:
    """Return an organizer, a participant, their CoLoTa-style competition and phase, and a queued job's id."""
    organizer = accounts.register_user(ctx, email="org@example.org", password=PASSWORD,
                                       display_name="Organizer Olga", is_organizer=True)
    alice = accounts.register_user(ctx, email="alice@example.org", password=PASSWORD, display_name="Alice Lab")
    competition = competitions.create_competition(ctx, slug="colota", title="Long-tail questions",
                                                  description="CoLoTa-style questions.", actor=organizer)
    phase = import_phase(ctx, competition_slug="colota", fmt="colota", filename="qa.json",
                         source=(DEMO / "colota_qa.json").read_bytes(), name="Questions with a very long name",
                         originals=(DEMO / "colota_qa_originals.csv").read_bytes(), actor=organizer).phase
    assert phase is not None
    phase = phases.open_phase(ctx, phase_id=phase.id, actor=organizer)
    for every, method in ((3, "zero-shot with a long method name"), (4, "retrieval")):
        accept_submission(ctx, phase_id=phase.id, user=alice, filename="a-rather-long-file-name-of-predictions.csv",
                          stream=io.BytesIO(_answers(ctx, phase, every)), method=method,
                          description="Llama-3-8B, zero-shot, abstain below p=0.6, a long description")
    with contextlib.suppress(SubmissionInvalid):
        accept_submission(ctx, phase_id=phase.id, user=alice, filename="broken.csv",
                          stream=io.BytesIO(b"id,prediction\nnope,true\n"))
    job = jobs.create_job(ctx, kind="rescore", actor=organizer, competition_id=competition.id, phase_id=phase.id)
    yield organizer, alice, competition, phase, job.id


def _log_in(page: Any, email: str) -> None:
    """Log in through the form."""
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def _axe(page: Any) -> list[dict[str, Any]]:
    """Inject axe-core from this origin and return its serious and critical violations."""
    page.add_script_tag(url=AXE)
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"][:3]]}
            for v in found if v["impact"] in ("serious", "critical") or v["id"] in WATCHED]


WATCHED = {"scrollable-region-focusable", "landmark-unique", "link-in-text-block", "meta-refresh", "color-contrast"}


def _check(page: Any, path: str, name: str, problems: list[str], focus: str | None = None) -> None:
    """Open path at each width: screenshot it (and the focus element), note sideways scrolling and axe violations."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        if focus:
            page.locator(focus).first.screenshot(path=str(SHOTS / f"{name}-{width}-part.png"))
        scroll = page.evaluate("() => document.documentElement.scrollWidth")
        if scroll > width:
            problems.append(f"{name} at {width} px is {scroll} px wide")
        wide = page.evaluate("() => [...document.querySelectorAll('.table-wrap')].filter(w => w.offsetParent)"
                             ".map(w => [w.scrollWidth, w.clientWidth]).filter(([s, c]) => s > c + 1)")
        if width == 1280 and wide:
            problems.append(f"{name} at 1280 px has tables wider than their box: {wide}")
        for violation in _axe(page):
            problems.append(f"{name} at {width} px: {violation}")


def test_core_pages_fit_both_widths_and_pass_axe(chromium: Any, live_server: str, world: Any) -> None:
    organizer, alice, competition, phase, job_id = world
    problems: list[str] = []
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    _check(page, "/", "home", problems)
    _log_in(page, alice.email)
    _check(page, f"/phases/{phase.id}", "phase", problems, focus="#history")
    _check(page, f"/c/{competition.slug}", "competition", problems)
    _check(page, "/account", "account", problems)
    context.close()
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    _log_in(page, organizer.email)
    _check(page, f"/organizer/c/{competition.slug}", "organizer-competition", problems)
    _check(page, f"/organizer/phases/{phase.id}/submissions", "organizer-submissions", problems)
    _check(page, f"/organizer/phases/{phase.id}/edit", "phase-edit", problems, focus=".views-picker")
    _check(page, f"/organizer/jobs/{job_id}", "job", problems)
    _check(page, f"/organizer/c/{competition.slug}/audit", "audit", problems)
    _check(page, f"/organizer/c/{competition.slug}/phases/import", "import", problems)
    _check(page, f"/organizer/phases/{phase.id}/baselines", "baseline", problems)
    _check(page, "/organizer/", "dashboard", problems)
    context.close()
    assert not problems, "\n".join(problems)


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Return a 4 KiB upload limit, so that the too-large page is one upload away."""
    return {"max_upload_bytes": 4096}


def test_a_partial_file_is_asked_about_and_a_large_one_states_the_limit(
        chromium: Any, live_server: str, world: Any, tmp_path: Path, ctx: ServiceContext) -> None:
    _, alice, _, phase, _ = world
    complete = _answers(ctx, phase, 3).decode().splitlines()
    partial = tmp_path / "partial.csv"
    partial.write_text("\n".join(complete[:4]) + "\n")  # the header and three answers
    large = tmp_path / "large.csv"
    large.write_text("\n".join(complete) + "\n" + "\n".join(f"extra-{i},true" for i in range(600)) + "\n")
    problems: list[str] = []
    for width in WIDTHS:
        context = chromium.new_context(viewport={"width": width, "height": 900}, base_url=live_server)
        page = context.new_page()
        page.set_default_timeout(15_000)
        _log_in(page, alice.email)
        page.goto(f"/phases/{phase.id}")
        page.get_by_label("Prediction file").set_input_files(str(partial))
        page.get_by_role("button", name="Upload and score").click()
        page.get_by_role("heading", name="Submit anyway?").wait_for()
        assert f"Your file answers 3 of {phase.n_items} items" in page.inner_text("#upload-confirm")
        page.screenshot(path=str(SHOTS / f"confirm-{width}.png"))
        problems += [f"confirm at {width} px: {v}" for v in _axe(page)]
        page.get_by_role("button", name="Submit anyway").click()
        page.wait_for_url("**/submissions/*")
        page.goto(f"/phases/{phase.id}")
        page.get_by_label("Prediction file").set_input_files(str(large))
        page.get_by_role("button", name="Upload and score").click()
        page.get_by_text("The limit is").wait_for()
        assert "4 KiB" in page.inner_text("main")
        page.screenshot(path=str(SHOTS / f"too-large-{width}.png"))
        problems += [f"too large at {width} px: {v}" for v in _axe(page)]
        page.get_by_role("link", name="Back to the form").click()
        page.get_by_role("button", name="Upload and score").wait_for()
        if page.evaluate("() => document.documentElement.scrollWidth") > width:
            problems.append(f"the phase page is wider than {width} px")
        context.close()
    assert not problems, "\n".join(problems)
