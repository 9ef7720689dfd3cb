"""Probing settings (docs/PROBING.md) through the API: set at creation, changed later, stated in the phase details."""

from __future__ import annotations

from api_helpers import create_phase, predictions, upload


def test_phase_details_state_the_probing_defaults(client, users, phase_id):
    probing = client.get(f"/api/v1/phases/{phase_id}").get_json()["probing"]
    assert (probing["min_slice_items"], probing["public_feedback"], probing["ladder_step"],
            probing["min_answered"]) == (25, "exact", None, None)
    assert "exact" in probing["rule"]
    assert "exact" in client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()["rule"]


def test_phase_creation_takes_the_probing_fields(client, users):
    phase_id = create_phase(client, users["organizer"], public_feedback="ladder", ladder_step="0.05",
                            min_answered="3", min_slice_items="4")
    probing = client.get(f"/api/v1/phases/{phase_id}").get_json()["probing"]
    assert (probing["min_slice_items"], probing["public_feedback"], probing["ladder_step"],
            probing["min_answered"]) == (4, "ladder", 0.05, 3)
    assert "ladder" in probing["rule"]


def test_a_bad_probing_field_at_creation_is_a_400_naming_it(client, users):
    client.post("/api/v1/competitions", json={"slug": "demo", "title": "Demo"}, headers=users["organizer"].headers)
    import io

    response = client.post("/api/v1/competitions/demo/phases", headers=users["organizer"].headers, data={
        "name": "P", "labels": (io.BytesIO(b'{"id": "a", "label": true}\n'), "l.jsonl"), "public_feedback": "rounded"})
    assert response.status_code == 400 and "public_feedback" in response.get_json()["error"]


def test_organizer_changes_settings_without_rescoring(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=2))
    url = f"/api/v1/phases/{phase_id}/settings"
    response = client.post(url, json={"public_feedback": "ladder", "min_answered": 5},
                           headers=users["organizer"].headers)
    assert response.status_code == 200
    assert response.get_json()["probing"]["public_feedback"] == "ladder"
    board = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()
    assert "ladder" in board["rule"]
    restored = client.post(url, json={"min_answered": None}, headers=users["organizer"].headers).get_json()
    assert restored["probing"]["min_answered"] is None and restored["probing"]["public_feedback"] == "ladder"


def test_participants_cannot_change_settings(client, users, phase_id):
    response = client.post(f"/api/v1/phases/{phase_id}/settings", json={"min_slice_items": 1},
                           headers=users["alice"].headers)
    assert response.status_code == 403


def test_bad_settings_are_refused_naming_the_key(client, users, phase_id):
    url = f"/api/v1/phases/{phase_id}/settings"
    for body in ({"ladder_step": 0}, {"min_slice_items": 0}, {"rounding": 2}):
        response = client.post(url, json=body, headers=users["organizer"].headers)
        assert response.status_code == 400 and next(iter(body)) in response.get_json()["error"]


def test_held_submission_shows_the_shown_best_only(client, users):
    phase_id = create_phase(client, users["organizer"], public_feedback="ladder")
    first = upload(client, users["alice"], phase_id, predictions(wrong=4)).get_json()["id"]
    second = upload(client, users["alice"], phase_id, predictions(wrong=3)).get_json()["id"]
    headers = users["alice"].headers
    shown = client.get(f"/api/v1/submissions/{first}", headers=headers).get_json()["scores"]
    held = client.get(f"/api/v1/submissions/{second}", headers=headers).get_json()["scores"]
    assert shown["feedback"]["released"] and not held["feedback"]["released"]
    assert held["overall"] == {"accuracy": shown["overall"]["accuracy"]}  # 0.85 is not 0.8 + step (0.2236)
    assert "breakdowns" not in held and not {"correct", "answered"} & set(shown["overall"])
    organizer = client.get(f"/api/v1/submissions/{second}", headers=users["organizer"].headers).get_json()
    assert organizer["scores"]["overall"]["accuracy"] == 0.85  # organizers see exact scores
