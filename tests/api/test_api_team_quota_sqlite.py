"""Members of one team uploading at once over real HTTP share one daily limit, on SQLite too.

(tests/api/test_api_concurrency.py runs the same race on PostgreSQL.)
"""

from __future__ import annotations

import threading
from collections import Counter

import requests
from api_helpers import create_phase, predictions

UPLOADS = 12
LIMIT = 5


def test_members_of_one_team_uploading_at_once_on_sqlite_get_exactly_the_limit(app, client, users, live_server):
    assert app.extensions["tailboard"].engine.dialect.name == "sqlite"
    phase_id = create_phase(client, users["organizer"], max_per_day=LIMIT)
    members = [users["alice"], users["bob"]]
    team = client.post("/api/v1/competitions/demo/teams", json={"name": "Lab"}, headers=members[0].headers)
    client.post("/api/v1/teams/join", json={"invite_code": team.get_json()["invite_code"]}, headers=members[1].headers)
    barrier = threading.Barrier(UPLOADS)
    results: list[requests.Response | None] = [None] * UPLOADS

    def send(i: int) -> None:
        barrier.wait()
        results[i] = requests.post(f"{live_server.url}/api/v1/phases/{phase_id}/submissions",
                                   files={"file": ("p.csv", predictions())}, headers=members[i % 2].headers,
                                   timeout=120)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(UPLOADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert Counter(r.status_code for r in results if r is not None) == {202: LIMIT, 429: UPLOADS - LIMIT}
    for member in members:
        quota = client.get(f"/api/v1/phases/{phase_id}", headers=member.headers).get_json()["quota"]
        assert (quota["used_today"], quota["remaining_today"]) == (LIMIT, 0)
