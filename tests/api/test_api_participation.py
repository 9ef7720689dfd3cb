"""The API of participation approval, competition settings and the default quota, on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from api_helpers import Caller, add_user, configure, create_phase, predictions, upload
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from leaderboard import create_app
from leaderboard.models import AuditEntry, Submission
from leaderboard.platform import Settings


@pytest.fixture
def app(settings: Settings) -> Iterator[Flask]:
    """Return an app on this run's database backend (the root fixtures: SQLite, then PostgreSQL)."""
    application = configure(create_app(dataclasses.asdict(settings)))
    yield application
    application.extensions["tailboard"].engine.dispose()


@pytest.fixture
def gated(client: FlaskClient, users: dict[str, Caller]) -> int:
    """Return an open phase of competition 'demo', which requires approval."""
    phase_id = create_phase(client, users["organizer"])
    changed = client.post("/api/v1/competitions/demo/settings", json={"requires_approval": True},
                          headers=users["organizer"].headers)
    assert changed.status_code == 200 and changed.get_json()["requires_approval"] is True
    return phase_id


def submissions(app: Flask) -> int:
    """Return how many participant submissions are stored."""
    with app.extensions["tailboard"].sessions() as session:
        return int(session.scalar(select(func.count()).select_from(Submission)
                                  .where(Submission.is_baseline.is_(False))))


def test_a_pending_participant_reads_but_cannot_submit_until_approved(app: Flask, client: FlaskClient,
                                                                      users: dict[str, Caller], gated: int) -> None:
    alice, organizer = users["alice"], users["organizer"]
    refused = upload(client, alice, gated, predictions())
    assert refused.status_code == 403 and "ask to take part" in refused.get_json()["error"]
    asked = client.post("/api/v1/competitions/demo/participation", headers=alice.headers)
    assert asked.status_code == 200
    assert asked.get_json() | {"rule": ""} == {"competition": "demo", "requires_approval": True, "status": "pending",
                                               "may_submit": False, "rule": ""}
    pending = upload(client, alice, gated, predictions())
    assert pending.status_code == 403
    assert "pending approval" in pending.get_json()["error"] and "Nothing was stored or charged" in \
        pending.get_json()["error"]
    assert client.get(f"/api/v1/phases/{gated}", headers=alice.headers).get_json()["quota"]["used_today"] == 0
    assert client.get(f"/api/v1/phases/{gated}/leaderboard", headers=alice.headers).status_code == 200
    assert submissions(app) == 0
    approved = client.post(f"/api/v1/competitions/demo/participants/{alice.user_id}/approve",
                           headers=organizer.headers)
    assert approved.status_code == 200 and approved.get_json()["status"] == "approved"
    assert upload(client, alice, gated, predictions()).status_code == 202
    mine = client.get("/api/v1/competitions/demo/participation", headers=alice.headers).get_json()
    assert (mine["status"], mine["may_submit"]) == ("approved", True)


def test_organizers_list_approve_and_refuse_and_each_decision_is_audited(app: Flask, client: FlaskClient,
                                                                         users: dict[str, Caller],
                                                                         gated: int) -> None:
    organizer, alice, bob = users["organizer"], users["alice"], users["bob"]
    for caller in (alice, bob):
        client.post("/api/v1/competitions/demo/participation", headers=caller.headers)
    listed = client.get("/api/v1/competitions/demo/participants", headers=organizer.headers).get_json()
    assert [(p["display_name"], p["email"], p["status"]) for p in listed["participants"]] == [
        ("Alice", "alice@example.org", "pending"), ("Bob", "bob@example.org", "pending")]
    client.post(f"/api/v1/competitions/demo/participants/{bob.user_id}/refuse", headers=organizer.headers)
    pending = client.get("/api/v1/competitions/demo/participants?status=pending", headers=organizer.headers)
    assert [p["display_name"] for p in pending.get_json()["participants"]] == ["Alice"]
    refused = client.get("/api/v1/competitions/demo/participants?status=refused", headers=organizer.headers)
    assert refused.get_json()["participants"][0]["decided_by"] == "Organizer"
    assert upload(client, bob, gated, predictions()).status_code == 403
    log = client.get("/api/v1/competitions/demo/audit", headers=organizer.headers).get_json()["entries"]
    assert any(e["summary"] == "refused the request to take part" and "Bob" in e["target"] for e in log)
    assert any("participation approval is now on" in e["summary"] for e in log)


def test_participants_are_for_the_competitions_managers_only(client: FlaskClient, app: Flask,
                                                             users: dict[str, Caller], gated: int) -> None:
    stranger = add_user(app, "other-org@example.org", "Other Org", organizer=True)
    alice = users["alice"]
    client.post("/api/v1/competitions/demo/participation", headers=alice.headers)
    for caller in (alice, stranger):
        assert client.get("/api/v1/competitions/demo/participants", headers=caller.headers).status_code == 403
        approve = client.post(f"/api/v1/competitions/demo/participants/{alice.user_id}/approve",
                              headers=caller.headers)
        assert approve.status_code == 403
        settings = client.post("/api/v1/competitions/demo/settings", json={"requires_approval": False},
                               headers=caller.headers)
        assert settings.status_code == 403
    assert client.get("/api/v1/competitions/demo/participants").status_code == 401
    assert client.post("/api/v1/competitions/demo/participation").status_code == 401
    missing = client.post(f"/api/v1/competitions/demo/participants/{users['bob'].user_id}/approve",
                          headers=users["organizer"].headers)
    assert missing.status_code == 404


def test_asking_where_no_approval_is_needed_is_a_conflict(client: FlaskClient, users: dict[str, Caller]) -> None:
    create_phase(client, users["organizer"])
    listed = client.get("/api/v1/competitions").get_json()["competitions"]
    assert listed[0]["requires_approval"] is False
    asked = client.post("/api/v1/competitions/demo/participation", headers=users["alice"].headers)
    assert asked.status_code == 409 and "needs no approval" in asked.get_json()["error"]
    state = client.get("/api/v1/competitions/demo/participation", headers=users["alice"].headers).get_json()
    assert (state["requires_approval"], state["may_submit"], state["status"]) == (False, True, None)


def test_a_competition_can_require_approval_from_its_creation(client: FlaskClient, users: dict[str, Caller]) -> None:
    made = client.post("/api/v1/competitions", json={"slug": "gate", "title": "Gate", "requires_approval": True},
                       headers=users["organizer"].headers)
    assert made.status_code == 201
    assert client.get("/api/v1/competitions").get_json()["competitions"][0]["requires_approval"] is True
    bad = client.post("/api/v1/competitions/gate/settings", json={"requires_approval": "maybe"},
                      headers=users["organizer"].headers)
    assert bad.status_code == 400


def test_an_api_phase_without_limits_takes_five_a_day_and_unlimited_is_explicit(
        app: Flask, client: FlaskClient, users: dict[str, Caller]) -> None:
    organizer = users["organizer"]
    default = create_phase(client, organizer, max_per_day=None)
    assert client.get(f"/api/v1/phases/{default}").get_json()["max_per_day"] == 5
    unlimited = create_phase(client, organizer, max_per_day="unlimited")
    assert client.get(f"/api/v1/phases/{unlimited}").get_json()["max_per_day"] is None
    empty = create_phase(client, organizer, max_per_day="")
    assert client.get(f"/api/v1/phases/{empty}").get_json()["max_per_day"] == 5
    form: dict[str, Any] = {"name": "Bad", "labels": (io.BytesIO(b'{"id": "a", "label": true}\n'), "l.jsonl"),
                            "config": json.dumps({"task_type": "binary"}), "max_per_day": "lots"}
    bad = client.post("/api/v1/competitions/demo/phases", data=form, headers=organizer.headers)
    assert bad.status_code == 400 and "max_per_day" in bad.get_json()["error"]


def test_the_openapi_document_describes_participation(client: FlaskClient) -> None:
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    for path in ("/api/v1/competitions/{slug}/participation", "/api/v1/competitions/{slug}/participants",
                 "/api/v1/competitions/{slug}/participants/{user_id}/approve",
                 "/api/v1/competitions/{slug}/participants/{user_id}/refuse",
                 "/api/v1/competitions/{slug}/settings"):
        assert path in paths, path
    assert "403" in paths["/api/v1/phases/{phase_id}/submissions"]["post"]["responses"]


def test_the_audit_log_has_one_row_per_decision(app: Flask, client: FlaskClient, users: dict[str, Caller],
                                                gated: int) -> None:
    alice, organizer = users["alice"], users["organizer"]
    client.post("/api/v1/competitions/demo/participation", headers=alice.headers)
    with app.extensions["tailboard"].sessions() as session:
        before = session.scalar(select(func.count()).select_from(AuditEntry))
    for decision in ("approve", "refuse", "approve"):
        client.post(f"/api/v1/competitions/demo/participants/{alice.user_id}/{decision}", headers=organizer.headers)
    with app.extensions["tailboard"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == before + 3
