"""Issue 20: the three journeys (organizer, participant, visitor) through the web pages only, at 1280 and 390 px.

One app instance and one Chromium serve the whole module. The first organizer account comes from the
CLI (``flask users create --organizer``); everything after it is done in the browser:

- organizer: log in, create a competition, import a benchmark file (preview, then create), open the
  phase, pick its leaderboard views and final-selection rule in the phase settings, prepare the archive
  (a job) and download it from the job's page;
- participant: register, upload a prediction file from the phase page, see it scored with its rank,
  select it as the final submission;
- visitor (logged out): home, competition, phase, ranking in both views, then, once the organizer has
  closed the phase, the closed phase's ranking and an entry's page.

The organizer's participants, submissions, announcement and webhook pages are checked before the phase
closes, and a pending submission's page (no meta refresh: a script polls) must load the scores by itself
once the submission is scored.

Every page is checked at both widths: axe-core (vendored under static/vendor/axe-core, injected by the
test only) reports no violation of any impact, and the page never scrolls sideways. Screenshots go to
/tmp/shots/journeys/ for people to look at.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from instance_snapshot import create_schema, hermetic_settings

# The journeys build on each other (module fixtures): one xdist worker runs them all.
pytestmark = [pytest.mark.browser, pytest.mark.backends("sqlite"), pytest.mark.xdist_group("journeys")]

SHOTS = Path("/tmp/shots/journeys")
AXE = "/static/vendor/axe-core/axe.min.js"
DEMO = Path(__file__).resolve().parents[3] / "leaderboard" / "demo"
WIDTHS = (1280, 390)
ORGANIZER = ("olga@example.org", "organizer-password")
PARTICIPANT = ("pia@example.org", "participant-password")
WIDE_ELEMENTS = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 4).map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""


@dataclasses.dataclass
class Journeys:
    """The module's live server, its browser and what the journeys found and made."""

    base_url: str
    chromium: Any
    app: Any
    problems: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    slug: str = "creak-tail"
    phase_id: int | None = None
    submission_id: int | None = None

    def page(self, width: int = 1280) -> Any:
        """Return a fresh page with its own cookies."""
        context = self.chromium.new_context(viewport={"width": width, "height": 900}, base_url=self.base_url)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("dialog", lambda dialog: dialog.accept())
        return page


def check(journeys: Journeys, page: Any, journey: str, name: str) -> None:
    """Check the page as it stands at both widths: axe-core violations, sideways scrolling; screenshot it."""
    problems = journeys.problems.setdefault(journey, [])
    page.wait_for_load_state()
    page.add_script_tag(url=AXE)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        scroll = page.evaluate("() => document.documentElement.scrollWidth")
        if scroll > width:
            problems.append(f"{name} at {width} px is {scroll} px wide: {page.evaluate(WIDE_ELEMENTS)}")
        found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
        problems += [f"{name} at {width} px: {v['id']} ({v['impact']}) {[n['target'] for n in v['nodes'][:3]]}"
                     for v in found]
        page.evaluate("() => window.scrollTo(0, 0)")  # the sticky bar stays at the top of a full-page shot
        page.screenshot(path=str(SHOTS / f"{journey}-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def log_in(page: Any, email: str, password: str) -> None:
    """Log in through the form."""
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login" not in url)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, chromium: Any) -> Iterator[Journeys]:
    """Serve one app for the module (SQLite) whose only account is an organizer made with the CLI."""
    from werkzeug.serving import make_server

    from leaderboard import create_app

    root = tmp_path_factory.mktemp("journeys")
    settings = hermetic_settings(create_schema(f"sqlite:///{root / 'tailboard.sqlite3'}"), root, {})
    app = create_app(dataclasses.asdict(settings))
    result = app.test_cli_runner().invoke(args=["users", "create", ORGANIZER[0], "--password", ORGANIZER[1],
                                                "--organizer", "--name", "Olga Organizer"])
    assert result.exit_code == 0, result.output
    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield Journeys(f"http://127.0.0.1:{http.server_port}", chromium, app)
    http.shutdown()
    thread.join(timeout=10)
    app.extensions["tailboard"].engine.dispose()


@pytest.fixture(scope="module")
def organized(server: Journeys, tmp_path_factory: pytest.TempPathFactory) -> Journeys:
    """Walk the organizer's journey: from no competition to an open phase with views, and its archive."""
    page = server.page()
    page.goto("/login")
    check(server, page, "organizer", "login")
    log_in(page, *ORGANIZER)
    page.goto("/organizer/")
    check(server, page, "organizer", "dashboard")
    page.get_by_role("link", name="New competition").click()
    check(server, page, "organizer", "competition-new")
    page.get_by_label("Slug").fill(server.slug)
    page.get_by_label("Title").fill("CREAK on long-tail entities")
    page.get_by_label("Description").fill("True or false claims about entities.\n\nMost of them are rare.")
    page.get_by_role("button", name="Create competition").click()
    page.get_by_role("link", name="Import a benchmark's released file").click()
    check(server, page, "organizer", "import")
    page.get_by_label("Benchmark format").select_option("creak")
    page.get_by_label("Released file").set_input_files(str(DEMO / "creak_claims.json"))
    page.get_by_label("Name", exact=True).fill("Claims")
    page.get_by_label("Preview only").check()
    page.get_by_role("button", name="Run the import").click()
    page.get_by_role("heading", name="Import report").wait_for()
    check(server, page, "organizer", "import-preview")
    page.get_by_role("button", name="Create the phase").click()
    page.get_by_text("was created with").wait_for()
    check(server, page, "organizer", "import-created")
    page.get_by_role("link", name="Back to the competition").click()
    page.get_by_role("button", name="Open now").click()
    page.get_by_role("button", name="Close now").wait_for()
    check(server, page, "organizer", "competition")
    page.get_by_role("link", name="Edit", exact=True).click()
    server.phase_id = int(page.url.rstrip("/").split("/")[-2])
    check(server, page, "organizer", "phase-edit")
    assert page.get_by_role("group", name="View 1").count() == 1  # the importer's views
    page.get_by_label("Final selections per team").fill("1")
    added = page.get_by_role("group", name="Add a view")
    added.get_by_label("View name").fill("Selective")
    added.get_by_label("Ranked by").select_option("selective_accuracy")
    added.get_by_label("Extra columns").select_option(["answer_rate", "ece"])
    check(server, page, "organizer", "phase-edit-views")
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Phase settings saved.").wait_for()
    page.get_by_role("button", name="Prepare the archive (.zip)").click()
    page.get_by_role("link", name="Download the archive (.zip)").wait_for()
    check(server, page, "organizer", "archive-job")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the archive (.zip)").click()
    archive = tmp_path_factory.mktemp("archive") / download.value.suggested_filename
    download.value.save_as(archive)
    assert archive.suffix == ".zip" and zipfile.is_zipfile(archive), archive
    with zipfile.ZipFile(archive) as opened:
        manifest = opened.read("manifest.json").decode()
    assert server.slug in manifest and '"Selective"' in manifest  # the competition, with the view just picked
    page.context.close()
    return server


@pytest.fixture(scope="module")
def participated(organized: Journeys, tmp_path_factory: pytest.TempPathFactory) -> Journeys:
    """Walk the participant's journey: register, upload, see the score and rank, select the final submission."""
    records = [json.loads(line) for line in (DEMO / "creak_claims.json").read_text().splitlines() if line.strip()]
    answers = tmp_path_factory.mktemp("answers") / "pia-claims.csv"
    answers.write_text("id,prediction\n" + "".join(f"{r['ex_id']},{'true' if i % 3 else r['label']}\n"
                                                   for i, r in enumerate(records)))
    page = organized.page()
    page.goto("/register")
    check(organized, page, "participant", "register")
    page.get_by_label("Email").fill(PARTICIPANT[0])
    page.get_by_label("Display name").fill("Pia Lab")
    page.get_by_label("Password", exact=True).fill(PARTICIPANT[1])
    page.get_by_label("Repeat password").fill(PARTICIPANT[1])
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(lambda url: "/register" not in url)
    check(organized, page, "participant", "registered")
    page.goto(f"/c/{organized.slug}")
    check(organized, page, "participant", "competition")
    page.get_by_role("link", name="Rules & submit").click()
    check(organized, page, "participant", "phase")
    assert page.get_by_role("button", name="Ask to take part").count() == 0  # approval is off: no asking
    page.get_by_label("Prediction file").set_input_files(str(answers))
    page.get_by_label("Method", exact=True).fill("true-unless-sure")
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url("**/submissions/*")
    organized.submission_id = int(page.url.rstrip("/").split("/")[-1])
    page.get_by_role("heading", name="Your entries on the ranking").wait_for()
    rank_row = page.locator(".my-entries tbody tr").first
    assert rank_row.locator(".rank").inner_text().strip() == "1"
    assert rank_row.locator("td.num").nth(1).inner_text().strip() not in ("", "–")
    check(organized, page, "participant", "submission")
    page.get_by_role("link", name="Claims").first.click()
    page.get_by_role("button", name=f"Select #{organized.submission_id}").click()
    page.get_by_role("button", name=f"Unselect #{organized.submission_id}").wait_for()
    check(organized, page, "participant", "phase-selected")
    page.get_by_role("link", name="View the ranking").click()
    assert "Pia Lab" in page.inner_text("main")
    check(organized, page, "participant", "ranking")
    page.context.close()
    return organized


def test_organizer_journey(organized: Journeys) -> None:
    assert organized.phase_id is not None
    assert not organized.problems.get("organizer"), "\n".join(organized.problems["organizer"])


def test_participant_journey(participated: Journeys) -> None:
    assert participated.submission_id is not None
    assert not participated.problems.get("participant"), "\n".join(participated.problems["participant"])


def test_visitor_journey(participated: Journeys) -> None:
    journeys = participated
    page = journeys.page()
    page.goto("/")
    check(journeys, page, "visitor", "home")
    page.get_by_role("link", name="CREAK on long-tail entities").first.click()
    check(journeys, page, "visitor", "competition")
    page.get_by_role("link", name="Rules & submit").click()
    assert page.get_by_role("link", name="Log in to submit").count() == 1
    check(journeys, page, "visitor", "phase")
    page.get_by_role("link", name="View the ranking").click()
    assert "Pia Lab" in page.inner_text("main")
    check(journeys, page, "visitor", "ranking")
    page.get_by_role("navigation", name="Leaderboard views").get_by_role("link", name="Selective").click()
    page.wait_for_url("**view=*")
    check(journeys, page, "visitor", "ranking-selective")
    organizer = journeys.page()
    log_in(organizer, *ORGANIZER)
    organizer.goto(f"/organizer/c/{journeys.slug}")
    organizer.get_by_role("link", name="participants", exact=True).click()
    check(journeys, organizer, "organizer-later", "participants")
    organizer.go_back()
    organizer.get_by_role("link", name="Submissions", exact=True).click()
    assert "Pia Lab" in organizer.inner_text("main")
    check(journeys, organizer, "organizer-later", "submissions")
    organizer.go_back()
    organizer.get_by_role("link", name="Announce", exact=True).click()
    check(journeys, organizer, "organizer-later", "announce")
    organizer.go_back()
    organizer.get_by_role("link", name="Webhooks", exact=True).click()
    check(journeys, organizer, "organizer-later", "webhooks")
    organizer.go_back()
    organizer.get_by_role("button", name="Close now").click()
    organizer.get_by_role("button", name="Reopen").wait_for()
    organizer.context.close()
    page.goto(f"/phases/{journeys.phase_id}")
    check(journeys, page, "visitor", "phase-closed")
    page.get_by_role("link", name="View the ranking").click()
    check(journeys, page, "visitor", "ranking-closed")
    entry = page.locator("main table a[href*='/submissions/'], main table a[href*='/entries/']").first
    if entry.count():
        entry.click()
        check(journeys, page, "visitor", "entry-closed")
    page.context.close()
    problems = journeys.problems.get("visitor", []) + journeys.problems.get("organizer-later", [])
    assert not problems, "\n".join(problems)


def set_status(journeys: Journeys, submission_id: int, status: str) -> None:
    """Set a submission's status in the database (as a scoring worker would)."""
    from leaderboard.models import Submission

    session = journeys.app.extensions["tailboard"].sessions()
    try:
        session.get(Submission, submission_id).status = status
        session.commit()
    finally:
        session.close()


def test_a_pending_submission_page_polls_until_it_is_scored(participated: Journeys) -> None:
    journeys = participated
    assert journeys.submission_id is not None
    set_status(journeys, journeys.submission_id, "queued")
    try:
        page = journeys.page()
        log_in(page, *PARTICIPANT)
        page.goto(f"/submissions/{journeys.submission_id}")
        page.get_by_text("waiting to be scored").wait_for()
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        check(journeys, page, "pending", "submission")
    finally:
        set_status(journeys, journeys.submission_id, "scored")
    page.get_by_role("heading", name="Scores").wait_for()  # the page's script saw the change and loaded it again
    assert page.get_by_text("waiting to be scored").count() == 0
    page.context.close()
    assert not journeys.problems.get("pending"), "\n".join(journeys.problems["pending"])
