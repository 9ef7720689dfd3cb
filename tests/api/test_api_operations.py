"""Organizer operations over the API (docs/ORGANIZING.md): re-scoring jobs, moderation, the audit log, reopening."""

from __future__ import annotations

import pytest
from api_helpers import create_phase, predictions, upload


def csv_names(client, phase_id: int) -> set[str]:
    """Return the display names on a phase's leaderboard CSV."""
    text = client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=csv").get_data(as_text=True)
    return {name for name in ("Alice", "Bob") if name in text}


def board_names(client, phase_id: int) -> set[str]:
    """Return the participants' display names on a phase's leaderboard (JSON)."""
    rows = client.get(f"/api/v1/phases/{phase_id}/leaderboard").get_json()["rows"]
    return {row["display_name"] for row in rows if not row["is_baseline"]}


def test_rescore_answers_202_with_a_job_that_finishes_after_the_response(client, users, phase_id):
    upload(client, users["alice"], phase_id, predictions(wrong=5))
    organizer = users["organizer"].headers
    response = client.post(f"/api/v1/phases/{phase_id}/rescore", headers=organizer)
    body = response.get_json()
    assert response.status_code == 202 and set(body) >= {"job_id", "url"}
    assert body["url"].endswith(f"/api/v1/jobs/{body['job_id']}")
    before = client.get(f"/api/v1/jobs/{body['job_id']}", headers=organizer).get_json()
    assert before["status"] == "queued"  # answered before the job ran
    response.close()  # the job runs after the response, as with a real server's worker
    job = client.get(f"/api/v1/jobs/{body['job_id']}", headers=organizer).get_json()
    assert (job["status"], job["done"], job["total"], job["error"]) == ("done", 4, 4, None)


@pytest.mark.parametrize("who", ["anonymous", "alice", "bob"])
def test_a_job_is_invisible_to_participants(client, users, phase_id, who):
    response = client.post(f"/api/v1/phases/{phase_id}/rescore", headers=users["organizer"].headers)
    response.close()
    job_id = response.get_json()["job_id"]
    answer = client.get(f"/api/v1/jobs/{job_id}", headers=users[who].headers)
    assert answer.status_code in (401, 403, 404)
    assert "done" not in (answer.get_json() or {})


def test_a_disqualified_submission_leaves_the_board_and_csv_and_its_owner_reads_why(client, users, phase_id):
    alice = upload(client, users["alice"], phase_id, predictions(wrong=1)).get_json()["id"]
    upload(client, users["bob"], phase_id, predictions(wrong=3))
    assert board_names(client, phase_id) == {"Alice", "Bob"} == csv_names(client, phase_id)
    organizer = users["organizer"].headers
    response = client.post(f"/api/v1/submissions/{alice}/disqualify", json={"reason": "Trained on the test set."},
                           headers=organizer)
    assert response.status_code == 200 and response.get_json()["state"] == "disqualified"
    assert board_names(client, phase_id) == {"Bob"} == csv_names(client, phase_id)
    mine = client.get(f"/api/v1/submissions/{alice}", headers=users["alice"].headers).get_json()
    assert mine["moderation"]["state"] == "disqualified"
    assert mine["moderation"]["reason"] == "Trained on the test set."
    assert client.post(f"/api/v1/submissions/{alice}/restore", headers=organizer).status_code == 200
    assert board_names(client, phase_id) == {"Alice", "Bob"}
    entries = client.get("/api/v1/competitions/demo/audit", headers=organizer).get_json()["entries"]
    assert [e["summary"].split()[0] for e in entries[:2]] == ["restored", "disqualified"]
    assert entries[1]["actor"] == "Organizer" and entries[1]["target"] == f"submission {alice}"


def test_disqualifying_needs_a_reason_and_a_manager(client, users, phase_id):
    alice = upload(client, users["alice"], phase_id, predictions()).get_json()["id"]
    assert client.post(f"/api/v1/submissions/{alice}/disqualify", json={},
                       headers=users["organizer"].headers).status_code == 400
    for who in ("alice", "bob"):  # participants may not moderate, not even their own
        response = client.post(f"/api/v1/submissions/{alice}/hide", headers=users[who].headers)
        assert response.status_code == 403
    assert board_names(client, phase_id) == {"Alice"}


def test_a_hidden_submission_is_off_the_board_at_once_and_quota_is_kept(client, users, phase_id):
    alice = upload(client, users["alice"], phase_id, predictions()).get_json()["id"]
    assert client.post(f"/api/v1/submissions/{alice}/hide", headers=users["organizer"].headers).status_code == 200
    assert board_names(client, phase_id) == set()
    phase = client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers).get_json()
    assert phase["quota"]["used_today"] == 1


def test_managers_download_any_submission_file_and_participants_cannot(client, users, phase_id):
    content = predictions(wrong=2)
    alice = upload(client, users["alice"], phase_id, content).get_json()["id"]
    response = client.get(f"/api/v1/submissions/{alice}/file", headers=users["organizer"].headers)
    assert response.status_code == 200 and response.data == content
    assert client.get(f"/api/v1/submissions/{alice}/file", headers=users["bob"].headers).status_code in (403, 404)
    assert client.get(f"/api/v1/submissions/{alice}/file", headers=users["alice"].headers).status_code in (403, 404)


def test_reopening_a_closed_phase_with_a_private_split_needs_confirmation(client, users):
    organizer = users["organizer"].headers
    phase_id = create_phase(client, users["organizer"], private=True)
    assert client.post(f"/api/v1/phases/{phase_id}/close", headers=organizer).status_code == 200
    refused = client.post(f"/api/v1/phases/{phase_id}/open", headers=organizer)
    assert refused.status_code == 409 and "confirm" in refused.get_json()["error"].lower()
    assert client.get(f"/api/v1/phases/{phase_id}").get_json()["status"] == "closed"
    assert client.post(f"/api/v1/phases/{phase_id}/open", json={"confirm": False}, headers=organizer).status_code == 409
    reopened = client.post(f"/api/v1/phases/{phase_id}/open", json={"confirm": True}, headers=organizer)
    assert reopened.status_code == 200 and reopened.get_json()["status"] == "open"
    summaries = [e["summary"] for e in client.get("/api/v1/competitions/demo/audit", headers=organizer)
                 .get_json()["entries"]]
    assert summaries[0].startswith("reopened the closed phase") and summaries[1].startswith("closed the phase")


def test_the_audit_log_is_for_managers_only(client, users, phase_id):
    for who, status in (("anonymous", 401), ("alice", 403)):
        assert client.get("/api/v1/competitions/demo/audit", headers=users[who].headers).status_code == status
