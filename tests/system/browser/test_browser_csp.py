"""Under the app's Content-Security-Policy every page still works in a real browser, with no violation.

Chromium reports each blocked script, style or frame as a ``securitypolicyviolation``
event and a console error; the test records both on every page a participant and an
organizer can open (and the API reference), and checks the scripted parts still run:
the local-time tooltips, the chosen-file note, the head/tail chart, Swagger UI and the
confirm() before closing a phase.
"""

from __future__ import annotations

from typing import Any

import pytest
from web_world import PASSWORD, World, build_world

from leaderboard.platform import ServiceContext

pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite")]

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


@pytest.fixture
def watched_page(browser_page: Any) -> tuple[Any, list[str]]:
    """Return the page and a list that collects CSP violations and console errors."""
    problems: list[str] = []
    browser_page.add_init_script(RECORD_VIOLATIONS)
    browser_page.on("console", lambda m: problems.append(f"console {m.type}: {m.text} ({m.location.get('url')})")
                    if (m.type == "error" or "Content Security Policy" in m.text)
                    and not str(m.location.get("url")).endswith("/favicon.ico") else None)  # the API docs page has none
    browser_page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    browser_page.on("response", lambda r: problems.append(f"{r.status} for {r.url}") if r.status >= 400 else None)
    return browser_page, problems


def visit(page: Any, path: str, problems: list[str]) -> None:
    """Open path, wait for its scripts, and move this page's CSP violations into problems."""
    response = page.goto(path)
    assert response is not None and response.status == 200, path
    page.wait_for_load_state("load")
    problems.extend(f"{path}: {v}" for v in page.evaluate("window.__cspViolations || []"))


def log_in(page: Any, email: str) -> None:
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login" not in url)


def test_participant_pages_work_without_csp_violations(watched_page: tuple[Any, list[str]], world: World) -> None:
    page, problems = watched_page
    for path in ("/", "/login", "/register", "/c/alpha", "/api/v1/docs"):
        visit(page, path, problems)
    page.locator(".swagger-ui .info").wait_for()  # Swagger UI started from static/api/docs.js

    log_in(page, world.alice.email)
    phase = world.open_phase.id
    for path in (f"/phases/{phase}", f"/phases/{phase}/leaderboard",
                 f"/submissions/{world.submission_ids['alice_good']}",
                 f"/submissions/{world.submission_ids['alice_bad']}", "/account"):
        visit(page, path, problems)
        if path.endswith("/leaderboard"):
            page.locator("table.board-table").wait_for()
        if path == f"/phases/{phase}":
            page.set_input_files("#file",
                                 files=[{"name": "p.csv", "mimeType": "text/csv", "buffer": b"id,prediction\n"}])
            assert "p.csv" in page.locator(".file-chosen").inner_text()
    assert problems == []


def test_organizer_pages_work_without_csp_violations(watched_page: tuple[Any, list[str]], world: World) -> None:
    page, problems = watched_page
    log_in(page, world.org_a.email)
    phase = world.open_phase.id
    for path in ("/organizer/", "/organizer/competitions/new", "/organizer/c/alpha", "/organizer/c/alpha/edit",
                 "/organizer/c/alpha/phases/new", "/organizer/c/alpha/phases/import", f"/organizer/phases/{phase}/edit",
                 f"/organizer/phases/{phase}/baselines", f"/organizer/phases/{phase}/submissions"):
        visit(page, path, problems)
    visit(page, "/organizer/c/alpha", problems)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))  # the fixture accepts every dialog
    row = page.locator("tbody tr", has=page.get_by_role("link", name=world.open_phase.name))
    row.get_by_role("button", name="Close now").click()
    page.get_by_text("The phase is closed").wait_for()
    assert dialogs and dialogs[0].startswith("Close")  # the confirm() of static/js/tailboard.js ran
    problems.extend(page.evaluate("window.__cspViolations || []"))
    assert problems == []


def test_a_page_of_the_site_cannot_be_framed(watched_page: tuple[Any, list[str]], live_server: str) -> None:
    page, _ = watched_page
    page.set_content(f'<iframe id="f" src="{live_server}/login"></iframe>')
    page.wait_for_timeout(1000)  # not a timing assertion: gives a refused frame the chance to (not) load
    frame = next(f for f in page.frames if f != page.main_frame)
    assert frame.locator("a.brand").count() == 0  # Chromium shows its own "refused to connect" page instead
