"""The daily quota holds under concurrent uploads over real HTTP, on PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
import requests
from api_helpers import LiveServer, add_user, configure, create_phase, predictions

from leaderboard import create_app

pytestmark = pytest.mark.postgres
UPLOADS = 12
LIMIT = 5


@pytest.fixture
def pg_server(tmp_path, postgres_url):
    """Serve an app on a fresh PostgreSQL database over HTTP (threaded server)."""
    app = configure(create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True,
                                "database_url": postgres_url}))
    assert app.extensions["tailboard"].engine.dialect.name == "postgresql"
    with LiveServer(app) as server:
        yield app, server
    app.extensions["tailboard"].engine.dispose()


def race(url: str, token: str, *, keys: list[str | None]) -> list[requests.Response]:
    """Send one upload per key from its own thread, all released at once."""
    barrier = threading.Barrier(len(keys))
    results: list[requests.Response | None] = [None] * len(keys)

    def send(i: int) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        if keys[i] is not None:
            headers["Idempotency-Key"] = keys[i]
        barrier.wait()
        results[i] = requests.post(url, files={"file": ("p.csv", predictions())}, headers=headers, timeout=60)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(keys))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def test_twelve_concurrent_uploads_against_a_limit_of_five_give_exactly_five_202(pg_server):
    app, server = pg_server
    client = app.test_client()
    organizer, alice = add_user(app, "o@example.org", "Org", organizer=True), add_user(app, "a@example.org", "Alice")
    phase_id = create_phase(client, organizer, max_per_day=LIMIT)
    responses = race(f"{server.url}/api/v1/phases/{phase_id}/submissions", alice.token, keys=[None] * UPLOADS)
    assert Counter(r.status_code for r in responses) == {202: LIMIT, 429: UPLOADS - LIMIT}
    refused = [r for r in responses if r.status_code == 429]
    assert all("Retry-After" in r.headers and r.json()["details"]["resets_at"] for r in refused)
    quota = requests.get(f"{server.url}/api/v1/phases/{phase_id}", headers=alice.headers, timeout=30).json()["quota"]
    assert (quota["used_today"], quota["remaining_today"]) == (LIMIT, 0)
    ids = {r.json()["id"] for r in responses if r.status_code == 202}
    assert len(ids) == LIMIT


def test_concurrent_retries_with_one_idempotency_key_make_one_submission(pg_server):
    app, server = pg_server
    client = app.test_client()
    organizer, alice = add_user(app, "o@example.org", "Org", organizer=True), add_user(app, "a@example.org", "Alice")
    phase_id = create_phase(client, organizer, max_per_day=LIMIT)
    responses = race(f"{server.url}/api/v1/phases/{phase_id}/submissions", alice.token, keys=["same-key"] * 6)
    assert {r.status_code for r in responses} == {202}
    assert len({r.json()["id"] for r in responses}) == 1
    quota = requests.get(f"{server.url}/api/v1/phases/{phase_id}", headers=alice.headers, timeout=30).json()["quota"]
    assert quota["used_today"] == 1


def team_race(url: str, tokens: list[str]) -> list[requests.Response]:
    """Send one upload per token from its own thread, all released at once."""
    barrier = threading.Barrier(len(tokens))
    results: list[requests.Response | None] = [None] * len(tokens)

    def send(i: int) -> None:
        barrier.wait()
        results[i] = requests.post(url, files={"file": ("p.csv", predictions())},
                                   headers={"Authorization": f"Bearer {tokens[i]}"}, timeout=60)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(tokens))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def test_members_of_one_team_uploading_at_once_get_exactly_the_teams_limit(pg_server):
    app, server = pg_server
    client = app.test_client()
    organizer = add_user(app, "o@example.org", "Org", organizer=True)
    members = [add_user(app, f"m{i}@example.org", f"Member {i}") for i in range(3)]
    phase_id = create_phase(client, organizer, max_per_day=LIMIT)
    team = client.post("/api/v1/competitions/demo/teams", json={"name": "Lab"}, headers=members[0].headers)
    for member in members[1:]:
        joined = client.post("/api/v1/teams/join", json={"invite_code": team.get_json()["invite_code"]},
                             headers=member.headers)
        assert joined.status_code == 200
    tokens = [members[i % len(members)].token for i in range(UPLOADS)]
    responses = team_race(f"{server.url}/api/v1/phases/{phase_id}/submissions", tokens)
    assert Counter(r.status_code for r in responses) == {202: LIMIT, 429: UPLOADS - LIMIT}
    assert all("Your team has used all" in r.json()["error"] for r in responses if r.status_code == 429)
    for member in members:
        quota = requests.get(f"{server.url}/api/v1/phases/{phase_id}", headers=member.headers, timeout=30).json()
        assert (quota["quota"]["used_today"], quota["quota"]["remaining_today"]) == (LIMIT, 0)
