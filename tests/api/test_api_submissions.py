"""Uploading prediction files over the API: 202, validation, quota, idempotency, visibility."""

from __future__ import annotations

import io

import pytest
from api_helpers import create_phase, predictions, upload


def quota_used(client, caller, phase_id) -> int:
    """Return how many submissions the caller was charged today."""
    return client.get(f"/api/v1/phases/{phase_id}", headers=caller.headers).get_json()["quota"]["used_today"]


def test_upload_is_accepted_with_202_before_it_is_scored(client, users, phase_id):
    response = client.post(f"/api/v1/phases/{phase_id}/submissions",
                           data={"file": (io.BytesIO(predictions()), "preds.csv"), "description": "run 1"},
                           headers=users["alice"].headers)
    body = response.get_json()
    assert response.status_code == 202
    assert body["status"] == "queued"  # inline scoring waits until the response is sent
    assert body["url"].endswith(f"/api/v1/submissions/{body['id']}") and response.headers["Location"] == body["url"]
    before = client.get(f"/api/v1/submissions/{body['id']}", headers=users["alice"].headers).get_json()
    assert before["status"] == "queued" and before["scores"] is None
    response.close()
    after = client.get(f"/api/v1/submissions/{body['id']}", headers=users["alice"].headers).get_json()
    assert after["status"] == "scored" and after["description"] == "run 1"
    assert after["scores"]["overall"]["accuracy"] == 1.0


def test_invalid_file_is_400_with_line_numbered_errors_and_costs_no_quota(client, users, phase_id):
    bad = b"id,prediction\nq0,yes\nq1,maybe\nq1,no\nzzz,yes\n"
    response = upload(client, users["alice"], phase_id, bad)
    assert response.status_code == 400
    details = response.get_json()["details"]
    assert details["error_count"] == 3
    assert [(e["line"], e["id"]) for e in details["errors"]] == [(3, "q1"), (4, "q1"), (5, "zzz")]
    assert quota_used(client, users["alice"], phase_id) == 0


def test_scores_never_reach_a_rejected_file(client, users, phase_id):
    response = upload(client, users["alice"], phase_id, b"not,a\nvalid,file\n")
    assert response.status_code == 400
    assert "accuracy" not in response.get_data(as_text=True)


def test_retry_with_the_same_idempotency_key_returns_the_first_submission(client, users, phase_id):
    first = upload(client, users["alice"], phase_id, predictions(), key="run-42")
    again = upload(client, users["alice"], phase_id, predictions(wrong=3), key="run-42")
    assert first.status_code == again.status_code == 202
    assert again.get_json()["id"] == first.get_json()["id"]
    assert quota_used(client, users["alice"], phase_id) == 1


def test_idempotency_keys_belong_to_one_user(client, users, phase_id):
    alice = upload(client, users["alice"], phase_id, predictions(), key="shared-key")
    bob = upload(client, users["bob"], phase_id, predictions(), key="shared-key")
    assert alice.status_code == bob.status_code == 202
    assert alice.get_json()["id"] != bob.get_json()["id"]


def test_retry_of_an_invalid_upload_repeats_its_errors_without_charging(client, users, phase_id):
    first = upload(client, users["alice"], phase_id, b"id,prediction\nnope,yes\n", key="bad-1")
    again = upload(client, users["alice"], phase_id, b"id,prediction\nnope,yes\n", key="bad-1")
    assert first.status_code == again.status_code == 400
    assert again.get_json()["details"] == first.get_json()["details"]
    assert quota_used(client, users["alice"], phase_id) == 0


def test_over_quota_is_429_with_retry_after_and_reset_time(client, users, phase_id):
    for _ in range(5):
        assert upload(client, users["alice"], phase_id, predictions()).status_code == 202
    response = upload(client, users["alice"], phase_id, predictions())
    assert response.status_code == 429
    body = response.get_json()
    assert body["details"]["resets_at"].endswith("T00:00:00Z")
    assert 0 < int(response.headers["Retry-After"]) <= 86400
    assert "resets" in body["error"]
    assert upload(client, users["bob"], phase_id, predictions()).status_code == 202


def test_upload_needs_a_token(client, users, phase_id):
    response = upload(client, users["anonymous"], phase_id, predictions())
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_upload_without_a_file_is_400(client, users, phase_id):
    response = client.post(f"/api/v1/phases/{phase_id}/submissions", data={"description": "x"},
                           headers=users["alice"].headers)
    assert response.status_code == 400
    assert "file" in response.get_json()["error"]


def test_upload_to_a_missing_phase_is_404(client, users):
    assert upload(client, users["alice"], 987654, predictions()).status_code == 404


def test_too_large_upload_is_413_json(tmp_path, users):
    from api_helpers import add_user, configure

    from leaderboard import create_app

    small = configure(create_app({"data_dir": tmp_path / "d", "labels_dir": tmp_path / "l", "max_upload_bytes": 2048,
                                  "testing": True}))
    client = small.test_client()
    organizer, alice = add_user(small, "o@example.org", "Org", organizer=True), add_user(small, "a@example.org", "Al")
    phase_id = create_phase(client, organizer)
    response = upload(client, alice, phase_id, b"id,prediction\n" + b"q0,yes\n" * 5000)
    assert response.status_code == 413
    assert set(response.get_json()) == {"error", "details"}


def test_too_long_idempotency_key_is_400(client, users, phase_id):
    assert upload(client, users["alice"], phase_id, predictions(), key="k" * 201).status_code == 400


@pytest.mark.parametrize(("who", "status"), [("alice", 200), ("organizer", 200), ("bob", 404), ("anonymous", 401)])
def test_a_submission_is_shown_to_its_owner_and_organizers_only(client, users, phase_id, who, status):
    submission_id = upload(client, users["alice"], phase_id, predictions()).get_json()["id"]
    response = client.get(f"/api/v1/submissions/{submission_id}", headers=users[who].headers)
    assert response.status_code == status
    if status == 200:
        assert response.get_json()["scores"]["overall"]["accuracy"] == 1.0


def test_missing_submission_is_404_for_a_participant(client, users):
    assert client.get("/api/v1/submissions/31337", headers=users["alice"].headers).status_code == 404


def test_rejected_submission_shows_its_errors_to_the_owner(client, users, phase_id):
    response = upload(client, users["alice"], phase_id, b"id,prediction\nq0,perhaps\n", key="k-err")
    assert response.status_code == 400
    # The rejected file was kept as failed (docs/RULES.md: nothing a user sent is lost); the retry reports it again.
    assert upload(client, users["alice"], phase_id, predictions(), key="k-err").status_code == 400


def test_private_scores_stay_hidden_from_the_owner_until_close(client, users):
    phase_id = create_phase(client, users["organizer"], private=True)
    submission_id = upload(client, users["alice"], phase_id, predictions(wrong=4)).get_json()["id"]
    mine = client.get(f"/api/v1/submissions/{submission_id}", headers=users["alice"].headers).get_json()
    assert "splits" not in mine["scores"] and mine["scores"]["n_items"] < 20
    assert "answered" not in mine["scores"]["overall"] and mine["scores"]["file"]["answered"] == 20
    assert mine["scores_scope"] == "public"
    organizer_view = client.get(f"/api/v1/submissions/{submission_id}", headers=users["organizer"].headers).get_json()
    assert set(organizer_view["scores"]["splits"]) == {"public", "private"}
    client.post(f"/api/v1/phases/{phase_id}/close", headers=users["organizer"].headers)
    mine = client.get(f"/api/v1/submissions/{submission_id}", headers=users["alice"].headers).get_json()
    assert set(mine["scores"]["splits"]) == {"public", "private"}
    assert mine["scores_scope"] == "all"


def test_scores_are_rounded_to_four_decimals(client, users):
    phase_id = create_phase(client, users["organizer"])
    submission_id = upload(client, users["alice"], phase_id, predictions(wrong=7)).get_json()["id"]
    scores = client.get(f"/api/v1/submissions/{submission_id}", headers=users["alice"].headers).get_json()["scores"]
    values = [v for v in scores["overall"].values() if isinstance(v, float)]
    values += [x for pair in scores["overall"]["ci"].values() if pair for x in pair]
    assert values and all(round(v, 4) == v for v in values)


def test_with_a_queue_the_upload_is_dispatched_before_the_answer(tmp_path):
    from api_helpers import add_user, configure

    from leaderboard import create_app

    app = configure(create_app({"data_dir": tmp_path / "d", "labels_dir": tmp_path / "l",
                                "scoring_mode": "celery", "celery_broker_url": "memory://"}))
    client = app.test_client()
    organizer, alice = add_user(app, "o@example.org", "Org", organizer=True), add_user(app, "a@example.org", "Al")
    phase_id = create_phase(client, organizer)
    sent: list[int] = []
    app.extensions["tailboard"].dispatcher = type("Queue", (), {"dispatch": lambda self, i: sent.append(i)})()
    response = client.post(f"/api/v1/phases/{phase_id}/submissions",
                           data={"file": (io.BytesIO(predictions()), "p.csv")}, headers=alice.headers)
    assert response.status_code == 202 and response.get_json()["status"] == "queued"
    assert sent == [response.get_json()["id"]]  # handed to the queue before the response was closed
