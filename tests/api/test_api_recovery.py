"""Retried scoring as the API and pages show it, and answers that survive a lost database connection."""

from __future__ import annotations

import pytest
from api_helpers import predictions, upload
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from leaderboard.submissions import scoring_runs


@pytest.fixture
def broken_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every scoring attempt fail on the platform's side."""
    def broken(*args: object) -> None:
        raise RuntimeError("scratch disk full")

    monkeypatch.setattr(scoring_runs, "evaluation", broken)


def test_organizers_see_failed_attempts_and_participants_do_not(client, users, phase_id, broken_scoring):
    accepted = upload(client, users["alice"], phase_id, predictions())
    assert accepted.status_code == 202
    url = f"/api/v1/submissions/{accepted.get_json()['id']}"
    mine = client.get(url, headers=users["alice"].headers).get_json()
    assert (mine["status"], mine["attempts"], mine["failure"]) == ("queued", None, None)
    assert "scratch disk" not in str(mine)
    managed = client.get(url, headers=users["organizer"].headers).get_json()
    assert (managed["status"], managed["attempts"]) == ("queued", 1)


def test_the_organizer_submissions_page_shows_failed_attempts(app, client, users, phase_id, broken_scoring, login):
    upload(client, users["alice"], phase_id, predictions())
    runtime = app.extensions["tailboard"]
    with runtime.sessions() as session:
        from leaderboard.models import User

        login(client, session.get(User, users["organizer"].user_id))
    page = client.get(f"/organizer/phases/{phase_id}/submissions").get_data(as_text=True)
    assert "Failed attempts" in page and "next try" in page and "scratch disk full" in page


def test_an_upload_is_answered_even_when_closing_its_session_loses_the_database(client, users, phase_id,
                                                                                monkeypatch):
    real_close = Session.close

    def close_on_a_dead_connection(self: Session) -> None:
        real_close(self)
        raise OperationalError("ROLLBACK", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(Session, "close", close_on_a_dead_connection)
    response = upload(client, users["alice"], phase_id, predictions())
    monkeypatch.undo()
    assert response.status_code == 202 and response.get_json()["status"] == "queued"
    assert client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers).get_json()["quota"][
        "used_today"] == 1

