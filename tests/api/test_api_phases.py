"""Phase details, quota, leaderboard and organizer actions over the API."""

from __future__ import annotations

import csv
import io

import pytest
from api_helpers import create_phase, predictions, upload


def test_anonymous_sees_phase_details_without_a_quota(client, users, phase_id):
    response = client.get(f"/api/v1/phases/{phase_id}")
    assert response.status_code == 200
    phase = response.get_json()
    assert (phase["status"], phase["task_type"], phase["max_per_day"], phase["quota"]) == ("open", "binary", 5, None)
    assert phase["competition"] == "demo"


def test_participant_sees_remaining_quota_and_reset_time(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions())
    quota = client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers).get_json()["quota"]
    assert (quota["used_today"], quota["remaining_today"], quota["max_per_day"]) == (1, 4, 5)
    assert quota["resets_at"].endswith("T00:00:00Z")
    other = client.get(f"/api/v1/phases/{phase_id}", headers=users["bob"].headers).get_json()["quota"]
    assert other["remaining_today"] == 5  # quotas are per user


def test_unknown_phase_is_404_json(client, users):
    response = client.get("/api/v1/phases/999999")
    assert response.status_code == 404
    assert set(response.get_json()) == {"error", "details"}


@pytest.mark.parametrize("action", ["open", "close", "rescore"])
@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("alice", 403), ("bob", 403)])
def test_phase_actions_are_for_organizers_only(client, users, phase_id, action, who, status):
    response = client.post(f"/api/v1/phases/{phase_id}/{action}", headers=users[who].headers)
    assert response.status_code == status
    assert client.get(f"/api/v1/phases/{phase_id}").get_json()["status"] == "open"


@pytest.mark.parametrize("action", ["open", "close", "rescore"])
def test_phase_actions_on_a_missing_phase_are_404(client, users, action):
    assert client.post(f"/api/v1/phases/424242/{action}", headers=users["organizer"].headers).status_code == 404


def test_closed_phase_refuses_uploads_with_409(client, users, phase_id):
    client.post(f"/api/v1/phases/{phase_id}/close", headers=users["organizer"].headers)
    response = upload(client, users["alice"], phase_id, predictions())
    assert response.status_code == 409


def test_rescore_keeps_the_same_scores(client, users, phase_id):
    submission_id = upload(client, users["alice"], phase_id, predictions(wrong=5)).get_json()["id"]
    before = client.get(f"/api/v1/submissions/{submission_id}", headers=users["alice"].headers).get_json()
    response = client.post(f"/api/v1/phases/{phase_id}/rescore", headers=users["organizer"].headers)
    response.close()  # rescoring runs after the response, as with a real server
    after = client.get(f"/api/v1/submissions/{submission_id}", headers=users["alice"].headers).get_json()
    assert after["status"] == "scored"
    assert after["scores"]["overall"]["accuracy"] == before["scores"]["overall"]["accuracy"] == 0.75


def test_leaderboard_ranks_participants_by_display_name_never_email(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    upload(client, users["bob"], phase_id, predictions(wrong=0))
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    ranked = [(row["rank"], row["display_name"], row["primary"]) for row in board["rows"] if not row["is_baseline"]]
    assert ranked == [(1, "Bob", 1.0), (2, "Alice", 0.9)]
    assert "tie" in board["rule"] and board["primary_metric"] == "accuracy"
    assert any(row["is_baseline"] and row["rank"] is None for row in board["rows"])
    alice = next(row for row in board["rows"] if row["display_name"] == "Alice")
    assert set(alice["results"]["popularity"]) >= {"head", "tail"}
    assert set(alice["results"]["breakdowns"]["category"]) == {"a", "b"}
    assert "ci" in alice["results"]["overall"]
    assert "example.org" not in client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_data(as_text=True)


def test_leaderboard_csv_has_the_same_rows(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    response = client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    assert [row["name"] for row in rows] == [row["display_name"] for row in board["rows"]]
    assert next(r for r in rows if r["name"] == "Alice")["accuracy"] == "0.9"


def test_leaderboard_with_an_unknown_format_is_400(client, users, phase_id):
    assert client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=xml").status_code == 400


def test_hidden_leaderboard_is_for_organizers_only(client, users):
    phase_id = create_phase(client, users["organizer"], leaderboard_visibility="hidden")
    assert client.get(f"/api/v1/phases/{phase_id}/leaderboard", headers=users["alice"].headers).status_code == 403
    assert client.get(f"/api/v1/phases/{phase_id}/leaderboard").status_code == 403
    assert client.get(f"/api/v1/phases/{phase_id}/leaderboard", headers=users["organizer"].headers).status_code == 200


def test_private_split_stays_hidden_until_the_phase_closes(client, users):
    phase_id = create_phase(client, users["organizer"], private=True)
    upload(client, users["alice"], phase_id, predictions(wrong=4))
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    alice = next(row for row in board["rows"] if row["display_name"] == "Alice")
    assert board["split"] == "public"
    assert "private" not in alice["results"].get("splits", {}) and "private" not in str(alice["results"])
    client.post(f"/api/v1/phases/{phase_id}/close", headers=users["organizer"].headers)
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    assert board["split"] == "private"
    alice = next(row for row in board["rows"] if row["display_name"] == "Alice")
    assert set(alice["results"]["splits"]) == {"public", "private"}
