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


def test_leaderboard_ranks_participants_by_display_name_never_email(client, users):
    phase_id = create_phase(client, users["organizer"], min_slice_items="5")  # slices of 10 items are shown
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    upload(client, users["bob"], phase_id, predictions(wrong=0))
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    ranked = [(row["rank"], row["display_name"], row["value"]) for row in board["rows"] if not row["is_baseline"]]
    assert ranked == [(1, "Bob", 1.0), (2, "Alice", 0.9)]
    assert "tie" in board["rule"] and board["view"]["metric"] == "accuracy" and board["views"] == ["Overall"]
    assert any(row["is_baseline"] and row["rank"] is None for row in board["rows"])
    alice = next(row for row in board["rows"] if row["display_name"] == "Alice")
    assert alice["ci"] and alice["stat_rank"] == 1 and alice["p_vs_previous"] is not None
    assert set(alice["columns"]) == set(board["view"]["columns"]) and "answer_rate" in alice["columns"]
    assert "results" not in alice and "breakdowns" not in str(board)  # rows carry no result objects
    assert "example.org" not in client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_data(as_text=True)


def test_leaderboard_csv_and_json_have_every_row_of_the_view(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    response = client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=json&per_page=1").get_json()
    assert [row["name"] for row in rows] == [row["display_name"] for row in board["rows"]] and len(rows) == 4
    assert next(r for r in rows if r["name"] == "Alice")["accuracy"] == "0.9"
    one = client.get(f"/api/v1/phases/{phase_id}/leaderboard?per_page=1&page=2").get_json()
    assert (one["total"], one["page"], len(one["rows"])) == (4, 2, 1)
    assert one["rows"][0]["display_name"] == board["rows"][1]["display_name"]


def test_leaderboard_sorts_searches_and_filters(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    upload(client, users["bob"], phase_id, predictions(wrong=1))
    url = f"/api/v1/phases/{phase_id}/leaderboard"
    worst = client.get(url + "?sort=accuracy&order=asc").get_json()["rows"]
    assert [r["value"] for r in worst] == sorted(r["value"] for r in worst)
    assert [r["display_name"] for r in client.get(url + "?q=ALI").get_json()["rows"]] == ["Alice"]
    assert client.get(url + "?open_weights=true").get_json()["total"] == 0
    assert client.get(url + "?sort=nope").status_code == 400
    assert client.get(url + "?per_page=501").status_code == 400
    assert client.get(url + "?view=Nope").status_code == 400
    mine = client.get(url, headers=users["alice"].headers).get_json()["rows"]
    assert [r["display_name"] for r in mine if r["mine"]] == ["Alice"]


def test_organizers_edit_views_and_the_board_follows(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    views = [{"name": "Overall", "metric": "accuracy"}, {"name": "Tail", "metric": "popularity.tail.accuracy",
                                                         "columns": ["popularity.tail.answer_rate"]}]
    url = f"/api/v1/phases/{phase_id}/views"
    assert client.post(url, json={"views": views}, headers=users["alice"].headers).status_code == 403
    assert client.post(url, json={"views": views}, headers=users["organizer"].headers).status_code == 200
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard?view=tail").get_json()
    assert board["views"] == ["Overall", "Tail"] and board["view"]["metric"] == "popularity.tail.accuracy"
    details = client.get(f"/api/v1/phases/{phase_id}").get_json()["views"]
    assert [(v["name"], v["metric"], v["higher_is_better"]) for v in details] == [
        ("Overall", "accuracy", True), ("Tail", "popularity.tail.accuracy", True)]
    bad = client.post(url, json={"views": [{"name": "X", "metric": "popularity.middle.accuracy"}]},
                      headers=users["organizer"].headers)
    assert bad.status_code == 400 and "valid paths" in bad.get_json()["error"]


def test_competition_leaderboard_ranks_entries_across_phases(client, users, phase_id):
    second = create_phase(client, users["organizer"])
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    upload(client, users["alice"], second, predictions(wrong=0))
    upload(client, users["bob"], phase_id, predictions(wrong=1))
    slug = client.get(f"/api/v1/phases/{phase_id}").get_json()["competition"]
    board = client.get(f"/api/v1/competitions/{slug}/leaderboard").get_json()
    assert [p["id"] for p in board["phases"]] == [phase_id, second]
    rows = {r["display_name"]: r for r in board["rows"]}
    assert rows["Alice"]["values"] == {str(phase_id): 0.9, str(second): 1.0} and rows["Alice"]["phases"] == 2
    assert rows["Alice"]["mean"] == 0.95 and rows["Bob"]["values"][str(second)] is None
    assert [r["display_name"] for r in board["rows"]][:2] == ["Alice", "Bob"]
    assert client.get(f"/api/v1/competitions/{slug}/leaderboard?sort=mean&order=asc").status_code == 200
    assert client.get(f"/api/v1/competitions/{slug}/leaderboard?sort=zzz").status_code == 400


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
    public = next(row for row in board["rows"] if row["display_name"] == "Alice")["value"]
    assert board["split"] == "public" and "private" not in str(board["rows"])
    client.post(f"/api/v1/phases/{phase_id}/close", headers=users["organizer"].headers)
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    assert board["split"] == "private" and "private split" in board["rule"]
    private = next(row for row in board["rows"] if row["display_name"] == "Alice")["value"]
    assert public is not None and private is not None
