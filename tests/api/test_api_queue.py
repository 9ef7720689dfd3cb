"""A queued submission's place in line and its estimate (docs/API.md, docs/RUNNING.md#the-scoring-queue).

The API's submission JSON (and its OpenAPI schema), the submission page, the organizers'
queue figures and the `tailboard submit --wait` line all tell the same place: owners take
turns, the one served least recently first.
"""

from __future__ import annotations

import pytest
from api_helpers import create_phase, predictions, upload
from test_cli_client import env, tailboard  # noqa: F401  (the client's fixture and runner)

from tailboard_cli import render


class Recorder:
    """A dispatcher that only records what it was asked to score: what is uploaded stays queued."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def dispatch(self, submission_id: int) -> None:
        """Record the id."""
        self.ids.append(submission_id)


@pytest.fixture
def queue(app, client, users) -> dict[str, list[int]]:
    """Return the ids of a queue: alice has 2 scored and 2 queued, then bob uploads 1 (queued)."""
    phase_id = create_phase(client, users["organizer"])
    for _ in range(2):  # scored now: alice was served, and the throughput is known
        assert upload(client, users["alice"], phase_id, predictions()).status_code == 202
    app.extensions["tailboard"].dispatcher = Recorder()
    alice = [upload(client, users["alice"], phase_id, predictions()).get_json()["id"] for _ in range(2)]
    bob = [upload(client, users["bob"], phase_id, predictions()).get_json()["id"]]
    return {"alice": alice, "bob": bob, "phase": [phase_id]}


def test_the_api_tells_each_queued_submission_its_place_owners_taking_turns(client, users, queue):
    bob = client.get(f"/api/v1/submissions/{queue['bob'][0]}", headers=users["bob"].headers).get_json()
    assert bob["status"] == "queued" and bob["queue_position"] == 1  # never served: first, before alice's
    places = [client.get(f"/api/v1/submissions/{i}", headers=users["alice"].headers).get_json()["queue_position"]
              for i in queue["alice"]]
    assert places == [2, 3]
    assert isinstance(bob["eta_seconds"], int) and bob["eta_seconds"] >= 1


def test_a_scored_submission_has_no_place(client, users, queue):
    scored = client.get(f"/api/v1/submissions/{queue['alice'][0] - 1}", headers=users["alice"].headers).get_json()
    assert scored["status"] == "scored"
    assert scored["queue_position"] is None and scored["eta_seconds"] is None


def test_the_openapi_document_lists_the_place_and_the_estimate(client):
    schema = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]["Submission"]
    assert {"queue_position", "eta_seconds"} <= set(schema["properties"])


def sign_in(client, user_id: int) -> None:
    """Log the web client in as the user (a Flask-Login session, as conftest's login fixture does)."""
    with client.session_transaction() as session:
        session["_user_id"], session["_fresh"], session["_session_version"] = str(user_id), True, 0


def test_the_submission_page_says_the_place(client, users, queue):
    sign_in(client, users["alice"].user_id)
    page = client.get(f"/submissions/{queue['alice'][1]}")
    assert page.status_code == 200
    assert "3rd in line, about" in page.get_data(as_text=True)


def test_organizers_see_the_phase_queue(client, users, queue):
    sign_in(client, users["organizer"].user_id)
    page = client.get(f"/organizer/phases/{queue['phase'][0]}/submissions").get_data(as_text=True)
    assert 'class="queue-length">3<' in page and 'class="queue-throughput">' in page


def test_the_client_line_names_the_place_and_the_estimate():
    line = render.waiting({"status": "queued", "queue_position": 3, "eta_seconds": 20})
    assert line == "queued: 3rd in line, about 20 s"
    assert render.waiting({"status": "queued", "queue_position": 11, "eta_seconds": None}) == "queued: 11th in line"
    assert render.waiting({"status": "scoring"}) == "scoring..."


def test_submit_wait_prints_the_place(app, client, users, queue, env, live_server):  # noqa: F811
    phase_id = queue["phase"][0]
    assert tailboard(env, "login", live_server.url, "--token", users["bob"].token).returncode == 0
    path = env["TAILBOARD_CONFIG_DIR"] + "-preds.csv"
    with open(path, "wb") as file:
        file.write(predictions())
    result = tailboard(env, "submit", str(phase_id), path, "--wait", "--timeout", "1")
    assert result.returncode == 10, result.stderr  # still queued: the recorder never scores it
    assert "queued: 3rd in line, about" in result.stderr  # turns: bob's first, alice's first, then this one
