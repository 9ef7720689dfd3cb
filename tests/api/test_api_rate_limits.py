"""Rate limits: per token (or address), separate from quotas; rejected uploads limited, not charged."""

from __future__ import annotations

from api_helpers import predictions, upload


def test_rejected_uploads_are_rate_limited_instead_of_charged(app, client, users, phase_id):
    app.config["API_INVALID_UPLOAD_RATELIMIT"] = "3 per hour"
    for _ in range(3):
        assert upload(client, users["alice"], phase_id, b"id,prediction\nnope,yes\n").status_code == 400
    blocked = upload(client, users["alice"], phase_id, predictions())
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) > 0
    assert "rejected uploads" in blocked.get_json()["error"]
    quota = client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers).get_json()["quota"]
    assert quota["used_today"] == 0
    assert upload(client, users["bob"], phase_id, predictions()).status_code == 202  # bob has his own bucket


def test_accepted_uploads_do_not_count_against_the_rejection_limit(app, client, users, phase_id):
    app.config["API_INVALID_UPLOAD_RATELIMIT"] = "2 per hour"
    for _ in range(4):
        assert upload(client, users["alice"], phase_id, predictions()).status_code == 202


def test_every_api_call_counts_against_the_per_token_limit(app, client, users, phase_id):
    app.config["API_RATELIMIT"] = "5 per minute"
    statuses = [client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    limited = client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers)
    assert limited.is_json and "Retry-After" in limited.headers
    assert client.get(f"/api/v1/phases/{phase_id}", headers=users["bob"].headers).status_code == 200


def test_anonymous_calls_are_limited_per_address(app, client, users, phase_id):
    app.config["API_RATELIMIT"] = "3 per minute"
    statuses = [client.get("/api/v1/competitions").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    other = client.get("/api/v1/competitions", environ_overrides={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 200
