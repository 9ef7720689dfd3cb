"""An organizer manages only the competitions they created, over the API as on the web."""

from __future__ import annotations

import io
import json

import pytest
from api_helpers import add_user, create_phase, make_labels, predictions, upload


@pytest.fixture
def rival(app):
    """Return another organizer, who created none of the test's competitions."""
    return add_user(app, "rival@example.org", "Rival", organizer=True)


@pytest.mark.parametrize("action", ["open", "close", "rescore"])
def test_another_organizer_gets_403_on_phase_actions(client, users, phase_id, rival, action):
    response = client.post(f"/api/v1/phases/{phase_id}/{action}", headers=rival.headers)
    assert response.status_code == 403
    assert "Another organizer" in response.get_json()["error"]
    assert client.get(f"/api/v1/phases/{phase_id}").get_json()["status"] == "open"


def test_another_organizer_gets_403_creating_a_phase(client, users, phase_id, rival):
    data = {"name": "Intruder", "labels": (io.BytesIO(make_labels()), "labels.jsonl"),
            "config": json.dumps({"task_type": "binary"})}
    response = client.post("/api/v1/competitions/demo/phases", data=data, headers=rival.headers)
    assert response.status_code == 403
    phases = next(c for c in client.get("/api/v1/competitions").get_json()["competitions"] if c["slug"] == "demo")
    assert [p["name"] for p in phases["phases"]] == ["Phase"]


def test_another_organizer_gets_404_on_a_submission_of_another_competition(client, users, rival):
    phase_id = create_phase(client, users["organizer"], private=True)
    submission_id = upload(client, users["alice"], phase_id, predictions()).get_json()["id"]
    assert client.get(f"/api/v1/submissions/{submission_id}", headers=rival.headers).status_code == 404
    creator = client.get(f"/api/v1/submissions/{submission_id}", headers=users["organizer"].headers).get_json()
    owner = client.get(f"/api/v1/submissions/{submission_id}", headers=users["alice"].headers).get_json()
    assert (creator["scores_scope"], owner["scores_scope"]) == ("all", "public")
    assert "private" in creator["scores"]["splits"]


def test_an_organizer_manages_the_competition_they_create(client, users, rival):
    phase_id = create_phase(client, rival, slug="rivals")
    assert client.post(f"/api/v1/phases/{phase_id}/close", headers=rival.headers).status_code == 200
    assert client.post(f"/api/v1/phases/{phase_id}/open", headers=users["organizer"].headers).status_code == 403
