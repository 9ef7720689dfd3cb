"""Organizer operation pages (docs/ORGANIZING.md): job progress, moderation buttons, the audit log, reopening, dates."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from web_world import World, build_world, predictions

from leaderboard.accounts import access
from leaderboard.models import Job, Submission
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


@pytest.fixture
def organizer(world: World, client: Any, login: Callable) -> Any:
    """Return the test client logged in as the organizer of competition alpha."""
    login(client, world.org_a)
    return client


def post(client: Any, path: str, token_page: str, fields: dict[str, Any], csrf_token: Callable) -> Any:
    """Post a form with the CSRF token of the page it lives on."""
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, token_page)})


def test_rescore_redirects_to_a_progress_page_that_updates_until_done(organizer: Any, csrf_token: Callable,
                                                                       world: World, ctx: ServiceContext) -> None:
    response = post(organizer, f"/organizer/phases/{world.open_phase.id}/rescore", "/organizer/c/alpha", {},
                    csrf_token)
    assert response.status_code == 303
    job_id = int(re.search(r"/organizer/jobs/(\d+)$", response.headers["Location"]).group(1))
    page = organizer.get(f"/organizer/jobs/{job_id}").get_data(as_text=True)
    job = ctx.session.get(Job, job_id)
    assert job.status == "done" and f"<strong>{job.done}</strong> of {job.total}" in page
    assert 'http-equiv="refresh"' not in page  # done: no more refreshing
    job.status = "running"
    ctx.session.commit()
    running = organizer.get(f"/organizer/jobs/{job_id}").get_data(as_text=True)
    assert 'http-equiv="refresh"' not in running and "<script>" not in running  # no meta refresh, no inline script
    assert "data-job-running" in running and "/static/js/job.js" in running  # it polls itself
    assert f'href="/organizer/jobs/{job_id}">Refresh now' in running  # and says how to without JavaScript


def test_a_job_page_is_not_shown_to_other_organizers_or_participants(client: Any, login: Callable, world: World,
                                                                     ctx: ServiceContext) -> None:
    from leaderboard.organizing import phases

    job = phases.rescore_phase(ctx, phase_id=world.open_phase.id, actor=world.org_a)
    login(client, world.org_b)
    assert client.get(f"/organizer/jobs/{job.id}").status_code == 404
    login(client, world.alice)
    assert client.get(f"/organizer/jobs/{job.id}").status_code == 403


def test_disqualifying_from_the_submission_list_shows_the_owner_the_reason(
        organizer: Any, csrf_token: Callable, world: World, client: Any, login: Callable) -> None:
    listing = f"/organizer/phases/{world.open_phase.id}/submissions"
    alice = world.submission_ids["alice_good"]
    response = post(organizer, f"/organizer/submissions/{alice}/disqualify", listing,
                    {"reason": "Copied another team's file."}, csrf_token)
    assert response.status_code == 303
    board = organizer.get(f"/phases/{world.open_phase.id}/leaderboard").get_data(as_text=True)
    assert "Alice Lab" not in board and "Bob Q" in board
    assert "disqualified" in organizer.get(listing).get_data(as_text=True)
    audit = organizer.get("/organizer/c/alpha/audit").get_data(as_text=True)
    assert "Alpha Org" in audit and f"submission {alice}" in audit and "Copied another team" in audit
    login(client, world.alice)
    page = client.get(f"/submissions/{alice}").get_data(as_text=True)
    assert "Disqualified by the organizers" in page and "Copied another team&#39;s file." in page


def test_disqualifying_without_a_reason_is_refused(organizer: Any, csrf_token: Callable, world: World,
                                                   ctx: ServiceContext) -> None:
    listing = f"/organizer/phases/{world.open_phase.id}/submissions"
    alice = world.submission_ids["alice_good"]
    post(organizer, f"/organizer/submissions/{alice}/disqualify", listing, {"reason": " "}, csrf_token)
    assert ctx.session.get(Submission, alice).moderation is None
    assert "Say why" in organizer.get(listing).get_data(as_text=True)


def test_managers_download_a_submission_file_from_the_list(organizer: Any, world: World) -> None:
    response = organizer.get(f"/organizer/submissions/{world.submission_ids['alice_good']}/file")
    assert response.status_code == 200 and response.data == predictions(wrong=("c02",))


def test_the_audit_log_page_is_for_the_competition_managers(client: Any, login: Callable, world: World) -> None:
    login(client, world.org_b)
    assert client.get("/organizer/c/alpha/audit").status_code == 403
    login(client, world.org_a)
    page = client.get("/organizer/c/alpha/audit").get_data(as_text=True)
    assert "created the competition" in page and "closed the phase" in page and "operator" in page


def test_reopening_a_closed_phase_goes_through_a_confirmation_step(organizer: Any, csrf_token: Callable,
                                                                   world: World, ctx: ServiceContext) -> None:
    closed = world.closed_phase.id
    response = post(organizer, f"/organizer/phases/{closed}/open", "/organizer/c/alpha", {}, csrf_token)
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/organizer/phases/{closed}/reopen")
    ctx.session.expire_all()
    assert access.phase_status(access.get_phase(ctx, closed)) == "closed"
    page = organizer.get(f"/organizer/phases/{closed}/reopen").get_data(as_text=True)
    assert "private split has been shown" in page
    unticked = post(organizer, f"/organizer/phases/{closed}/reopen", f"/organizer/phases/{closed}/reopen", {},
                    csrf_token)
    assert unticked.status_code == 400
    ticked = post(organizer, f"/organizer/phases/{closed}/reopen", f"/organizer/phases/{closed}/reopen",
                  {"confirm": "y"}, csrf_token)
    assert ticked.status_code == 303
    ctx.session.expire_all()
    assert access.phase_status(access.get_phase(ctx, closed)) == "open"
    phase_page = organizer.get(f"/phases/{closed}").get_data(as_text=True)
    assert "shown only after the phase closes" not in phase_page and "were shown when the phase closed" in phase_page
    assert "reopened the closed phase" in organizer.get("/organizer/c/alpha/audit").get_data(as_text=True)


def test_upcoming_phases_offer_no_close_now(organizer: Any, world: World) -> None:
    page = organizer.get("/organizer/c/alpha").get_data(as_text=True)
    rows = {name: row for row in page.split("<tr>")[1:] for name in ("Open phase", "Closed phase", "Upcoming phase")
            if f">{name}</a>" in row}
    assert "Close now" in rows["Open phase"]
    assert "Close now" not in rows["Upcoming phase"] and "Open now" in rows["Upcoming phase"]
    assert "Close now" not in rows["Closed phase"] and "Reopen" in rows["Closed phase"]


def test_utc_date_fields_show_and_read_24_hour_utc(organizer: Any, csrf_token: Callable, world: World,
                                                  ctx: ServiceContext) -> None:
    path = f"/organizer/phases/{world.upcoming_phase.id}/edit"
    form = organizer.get(path).get_data(as_text=True)
    start = re.search(r'<input[^>]*name="start_at"[^>]*>', form).group(0)
    assert 'type="text"' in start and 'type="datetime-local"' not in form
    response = post(organizer, path, path, {"name": "Upcoming phase", "start_at": "2031-05-01 18:45",
                                            "end_at": "2031-06-01 00:00", "leaderboard_visibility": "public",
                                            "public_feedback": "exact", "min_slice_items": "2"}, csrf_token)
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    ctx.session.expire_all()
    assert access.get_phase(ctx, world.upcoming_phase.id).start_at.isoformat() == "2031-05-01T18:45:00"
    again = re.search(r'<input[^>]*name="start_at"[^>]*>', organizer.get(path).get_data(as_text=True)).group(0)
    assert 'value="2031-05-01 18:45"' in again  # 24-hour, no AM/PM, no seconds
