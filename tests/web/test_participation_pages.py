"""Participation approval on the web: ask from the phase page, organizers approve or refuse (CSRF), uploads wait."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select
from web_world import World, build_world, predictions

from leaderboard.accounts import audit
from leaderboard.models import Competition, Participation, Submission
from leaderboard.organizing import competitions
from leaderboard.platform import ServiceContext


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world, with competition alpha requiring approval."""
    built = build_world(ctx)
    competitions.update_competition(ctx, slug="alpha", actor=built.org_a, requires_approval=True)
    return built


def upload(client: Any, phase_id: int, token: str) -> Any:
    """Post a prediction file through the phase page's form."""
    form = {"file": (io.BytesIO(predictions()), "preds.csv"), "csrf_token": token}
    return client.post(f"/phases/{phase_id}", data=form, content_type="multipart/form-data")


def uploads_of(ctx: ServiceContext, user_id: int) -> int:
    """Return how many submissions user_id has stored."""
    ctx.session.expire_all()
    return int(ctx.session.scalar(select(func.count()).select_from(Submission).where(Submission.user_id == user_id)))


def test_a_participant_asks_waits_and_submits_once_approved(world: World, client: Any, login: Callable,
                                                            csrf_token: Callable, ctx: ServiceContext) -> None:
    phase_path = f"/phases/{world.open_phase.id}"
    before = uploads_of(ctx, world.bob.id)
    login(client, world.bob)
    page = client.get(phase_path).get_data(as_text=True)
    assert "Ask to take part" in page and "Upload and score" not in page
    refused = upload(client, world.open_phase.id, csrf_token(client, phase_path))
    assert refused.status_code == 403 and "ask to take part" in refused.get_data(as_text=True)
    asked = client.post(f"/c/alpha/participation?phase={world.open_phase.id}",
                        data={"csrf_token": csrf_token(client, phase_path)})
    assert asked.status_code == 303 and asked.headers["Location"].endswith(phase_path)
    page = client.get(phase_path).get_data(as_text=True)
    assert "request to take part is pending" in page and "Ask to take part" not in page
    pending = upload(client, world.open_phase.id, csrf_token(client, phase_path))
    assert pending.status_code == 403 and "pending approval" in pending.get_data(as_text=True)
    assert uploads_of(ctx, world.bob.id) == before

    organizer = client.application.test_client()
    login(organizer, world.org_a)
    listing = "/organizer/c/alpha/participants"
    page = organizer.get(listing).get_data(as_text=True)
    assert "Bob Q" in page and "bob@example.com" in page and "pending" in page
    decided = organizer.post(f"{listing}/{world.bob.id}/approve", data={"csrf_token": csrf_token(organizer, listing)})
    assert decided.status_code == 303
    assert "approved" in organizer.get(listing).get_data(as_text=True)
    accepted = upload(client, world.open_phase.id, csrf_token(client, phase_path))
    assert accepted.status_code == 303 and "/submissions/" in accepted.headers["Location"]
    assert uploads_of(ctx, world.bob.id) == before + 1


def test_a_refused_participant_is_told_and_the_decision_is_audited(world: World, client: Any, login: Callable,
                                                                  csrf_token: Callable, ctx: ServiceContext) -> None:
    login(client, world.bob)
    client.post("/c/alpha/participation", data={"csrf_token": csrf_token(client, "/c/alpha")})
    organizer = client.application.test_client()
    login(organizer, world.org_a)
    listing = "/organizer/c/alpha/participants"
    organizer.post(f"{listing}/{world.bob.id}/refuse", data={"csrf_token": csrf_token(organizer, listing)})
    page = client.get(f"/phases/{world.open_phase.id}").get_data(as_text=True)
    assert "refused your request" in page and "Upload and score" not in page
    assert "refused your request" in client.get("/c/alpha").get_data(as_text=True)
    rows = audit.audit_log(ctx, slug="alpha", actor=world.org_a)
    assert rows[0].summary == "refused the request to take part" and "Bob Q" in rows[0].target


def test_decisions_need_a_csrf_token_and_a_manager(world: World, client: Any, login: Callable,
                                                   csrf_token: Callable, ctx: ServiceContext) -> None:
    login(client, world.bob)
    client.post("/c/alpha/participation", data={"csrf_token": csrf_token(client, "/c/alpha")})
    listing = "/organizer/c/alpha/participants"
    assert client.get(listing).status_code == 403  # a participant
    other = client.application.test_client()
    login(other, world.org_b)
    assert other.get(listing).status_code == 403  # the organizer of another competition
    organizer = client.application.test_client()
    login(organizer, world.org_a)
    assert organizer.post(f"{listing}/{world.bob.id}/approve").status_code == 400  # no CSRF token
    assert organizer.post(f"{listing}/{world.bob.id}/approve", data={"csrf_token": "forged"}).status_code == 400
    assert ctx.session.scalar(select(Participation.status)) == "pending"
    assert client.post("/c/alpha/participation").status_code == 400


def test_an_anonymous_visitor_reads_the_phase_and_is_asked_to_log_in(world: World, client: Any) -> None:
    page = client.get(f"/phases/{world.open_phase.id}")
    assert page.status_code == 200 and "Log in to submit" in page.get_data(as_text=True)
    assert client.get(f"/phases/{world.open_phase.id}/leaderboard").status_code == 200
    competition_page = client.get("/c/alpha").get_data(as_text=True)
    assert "Taking part needs the organizers" in competition_page


def test_the_organizer_switches_approval_on_the_competition_edit_form(world: World, client: Any, login: Callable,
                                                                      csrf_token: Callable,
                                                                      ctx: ServiceContext) -> None:
    login(client, world.org_b)
    path = "/organizer/c/beta/edit"
    assert "needs my approval" not in client.get("/organizer/c/beta").get_data(as_text=True)
    response = client.post(path, data={"title": "Beta benchmark", "requires_approval": "y",
                                       "csrf_token": csrf_token(client, path)})
    assert response.status_code == 303
    ctx.session.expire_all()
    assert ctx.session.scalar(select(Competition.requires_approval).where(Competition.slug == "beta")) is True
    assert "approval on" in client.get("/organizer/c/beta").get_data(as_text=True)
    client.post(path, data={"title": "Beta benchmark", "csrf_token": csrf_token(client, path)})
    ctx.session.expire_all()
    assert ctx.session.scalar(select(Competition.requires_approval).where(Competition.slug == "beta")) is False
