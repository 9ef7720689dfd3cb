"""Competitions and phase creation over the API, for the right and the wrong caller."""

from __future__ import annotations

import io
import json

import pytest
from api_helpers import create_phase, make_labels


def phase_form(**overrides: object) -> dict[str, object]:
    """Return a valid phase-creation form."""
    form: dict[str, object] = {
        "name": "Dev", "labels": (io.BytesIO(make_labels()), "labels.jsonl"),
        "config": json.dumps({"task_type": "binary", "primary_metric": "accuracy"}),
        "start": "2030-01-01T00:00:00Z", "end": "2030-02-01T00:00:00+01:00", "max_per_day": "3", "max_total": "10",
    }
    form.update(overrides)
    return {key: value for key, value in form.items() if value is not None}


def test_anyone_lists_competitions_with_phases_and_status(client, users, phase_id):
    response = client.get("/api/v1/competitions")
    assert response.status_code == 200
    [competition] = response.get_json()["competitions"]
    assert competition["slug"] == "demo"
    assert [(p["id"], p["status"]) for p in competition["phases"]] == [(phase_id, "open")]


def test_listing_with_a_bad_token_is_refused(client, users):
    response = client.get("/api/v1/competitions", headers={"Authorization": "Bearer tb_not-a-token"})
    assert response.status_code == 401
    assert response.get_json()["error"]
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_organizer_creates_a_competition(client, users):
    response = client.post("/api/v1/competitions", json={"slug": "creak", "title": "CREAK", "description": "Claims"},
                           headers=users["organizer"].headers)
    assert response.status_code == 201
    assert response.get_json()["slug"] == "creak"
    assert [c["slug"] for c in client.get("/api/v1/competitions").get_json()["competitions"]] == ["creak"]


@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("alice", 403)])
def test_only_organizers_create_competitions(client, users, who, status):
    response = client.post("/api/v1/competitions", json={"slug": "x", "title": "X"}, headers=users[who].headers)
    assert response.status_code == status
    assert client.get("/api/v1/competitions").get_json()["competitions"] == []


def test_duplicate_slug_is_a_conflict(client, users):
    body = {"slug": "dup", "title": "Dup"}
    assert client.post("/api/v1/competitions", json=body, headers=users["organizer"].headers).status_code == 201
    response = client.post("/api/v1/competitions", json=body, headers=users["organizer"].headers)
    assert response.status_code == 409


@pytest.mark.parametrize("body", [{"slug": "Bad Slug", "title": "x"}, {"title": "no slug"}, {"slug": "ok"}, []])
def test_invalid_competition_bodies_are_400_with_field_details(client, users, body):
    response = client.post("/api/v1/competitions", json=body, headers=users["organizer"].headers)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error", "details"}


def test_organizer_creates_a_phase_from_files_dates_and_limits(client, users):
    client.post("/api/v1/competitions", json={"slug": "demo", "title": "Demo"}, headers=users["organizer"].headers)
    response = client.post("/api/v1/competitions/demo/phases", data=phase_form(), headers=users["organizer"].headers)
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    assert created["status"] == "upcoming"
    phase = client.get(f"/api/v1/phases/{created['id']}").get_json()
    assert (phase["max_per_day"], phase["max_total"], phase["n_items"]) == (3, 10, 20)
    assert phase["start_at"] == "2030-01-01T00:00:00Z"
    assert phase["end_at"] == "2030-01-31T23:00:00Z"  # +01:00 converted to UTC


def test_phase_config_may_be_a_file_part(client, users):
    client.post("/api/v1/competitions", json={"slug": "demo", "title": "Demo"}, headers=users["organizer"].headers)
    config = (io.BytesIO(b'{"task_type": "binary", "primary_metric": "f1"}'), "phase.json")
    response = client.post("/api/v1/competitions/demo/phases", data=phase_form(config=config),
                           headers=users["organizer"].headers)
    assert response.status_code == 201
    assert client.get(f"/api/v1/phases/{response.get_json()['id']}").get_json()["primary_metric"] == "f1"


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"config": "{not json"}, "not valid JSON"),
        ({"config": "[1, 2]"}, "JSON object"),
        ({"labels": None}, "labels"),
        ({"labels": (io.BytesIO(b'{"id": "a"}\n'), "labels.jsonl")}, "label"),
        ({"max_per_day": "many"}, "max_per_day"),
        ({"start": "yesterday"}, "start"),
    ],
)
def test_bad_phase_input_is_400_naming_the_problem(client, users, overrides, needle):
    client.post("/api/v1/competitions", json={"slug": "demo", "title": "Demo"}, headers=users["organizer"].headers)
    response = client.post("/api/v1/competitions/demo/phases", data=phase_form(**overrides),
                           headers=users["organizer"].headers)
    assert response.status_code == 400
    assert needle.lower() in response.get_json()["error"].lower()


def test_phase_of_an_unknown_competition_is_404(client, users):
    response = client.post("/api/v1/competitions/nope/phases", data=phase_form(), headers=users["organizer"].headers)
    assert response.status_code == 404


@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("alice", 403), ("bob", 403)])
def test_only_organizers_create_phases(client, users, who, status):
    client.post("/api/v1/competitions", json={"slug": "demo", "title": "Demo"}, headers=users["organizer"].headers)
    response = client.post("/api/v1/competitions/demo/phases", data=phase_form(), headers=users[who].headers)
    assert response.status_code == status
    assert client.get("/api/v1/competitions").get_json()["competitions"][0]["phases"] == []


def test_organizer_with_only_a_token_runs_a_whole_phase(client, users):
    organizer = users["organizer"].headers
    phase_id = create_phase(client, users["organizer"], open_it=False)
    assert client.post(f"/api/v1/phases/{phase_id}/open", headers=organizer).get_json()["status"] == "open"
    response = client.post(f"/api/v1/phases/{phase_id}/rescore", headers=organizer)
    response.close()
    assert response.status_code == 202
    assert response.get_json()["queued"] >= 1  # the built-in baselines
    assert client.post(f"/api/v1/phases/{phase_id}/close", headers=organizer).get_json()["status"] == "closed"
