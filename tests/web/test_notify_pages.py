"""Notification pages: the account's mail switch, a phase's announcement form, a competition's webhooks page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from smtp_server import MailServer
from sqlalchemy import select

from leaderboard.models import AuditEntry, MailOutbox, Submission, Webhook
from leaderboard.notify import preferences
from leaderboard.organizing import competitions
from leaderboard.platform.db import utcnow


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    """Return a running SMTP server on loopback."""
    with MailServer() as server:
        yield server


@pytest.fixture
def settings_overrides(mail_server: MailServer) -> dict[str, Any]:
    """Send mail to the loopback server."""
    return {"smtp_url": f"smtp://127.0.0.1:{mail_server.port}", "mail_from": "tailboard@example.org"}


def confirmed(ctx: Any, user: Any) -> Any:
    """Mark the account confirmed and drop its confirmation mail."""
    user.email_confirmed_at = utcnow()
    ctx.session.execute(MailOutbox.__table__.delete())
    ctx.session.commit()
    return user


def test_the_account_page_turns_submission_mails_off_and_on(app, client, ctx, make_user, login,
                                                            csrf_token) -> None:
    user = confirmed(ctx, make_user())
    login(client, user)
    page = client.get("/account").get_data(as_text=True)
    assert re.search(r'name="submission_mail" value="on"\s+checked', page)
    token = csrf_token(client, "/account")
    assert client.post("/account/notifications", data={"csrf_token": token}).status_code == 303
    ctx.session.expire_all()
    assert not preferences.submission_mail_on(ctx.session, user_id=user.id)
    assert not re.search(r'name="submission_mail" value="on"\s+checked', client.get("/account").get_data(as_text=True))
    client.post("/account/notifications", data={"csrf_token": token, "submission_mail": "on"})
    ctx.session.expire_all()
    assert preferences.submission_mail_on(ctx.session, user_id=user.id)


def test_the_announce_form_shows_counts_and_sends_to_the_chosen_audience(app, client, ctx, make_user,
                                                                         make_organizer, make_phase, login,
                                                                         csrf_token, make_predictions) -> None:
    import io

    from leaderboard.submissions import accept_submission

    owner = confirmed(ctx, make_organizer())
    competition = competitions.create_competition(ctx, slug="c1", title="C1", description="", actor=owner)
    phase = make_phase(competition)
    a, b = confirmed(ctx, make_user("a@example.org")), confirmed(ctx, make_user("b@example.org"))
    for user in (a, b):
        accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(make_predictions()))
    chosen = ctx.session.scalar(select(Submission).where(Submission.user_id == b.id))
    chosen.selected = True
    ctx.session.execute(MailOutbox.__table__.delete())
    ctx.session.commit()
    login(client, owner)
    path = f"/organizer/phases/{phase.id}/announce"
    page = client.get(path).get_data(as_text=True)
    assert 'data-audience="submitted">(2 people)' in page and 'data-audience="selected">(1 person)' in page
    answer = client.post(path, data={"csrf_token": csrf_token(client, path), "audience": "selected",
                                     "subject": "Final call", "body": "Choose wisely."})
    assert answer.status_code == 303
    assert ctx.session.scalars(select(MailOutbox.recipient)).all() == ["b@example.org"]
    assert ctx.session.scalar(select(AuditEntry.summary).where(AuditEntry.summary.like("sent the announ%")))


def test_webhooks_page_shows_the_secret_once_and_hides_everything_from_another_organizer(
        app, client, ctx, make_organizer, login, csrf_token) -> None:
    owner, rival = make_organizer(), make_organizer()
    competitions.create_competition(ctx, slug="mine", title="Mine", description="", actor=owner)
    competitions.create_competition(ctx, slug="theirs", title="Theirs", description="", actor=rival)
    login(client, owner)
    path = "/organizer/c/mine/webhooks"
    created = client.post(path, data={"csrf_token": csrf_token(client, path), "url": "https://example.org/h",
                                      "events": ["submission.scored", "board.changed"]})
    assert created.status_code == 200 and created.headers["Cache-Control"] == "no-store"
    hook = ctx.session.scalars(select(Webhook)).one()
    assert hook.secret in created.get_data(as_text=True)
    assert hook.events == ["submission.scored", "board.changed"]
    listed = client.get(path).get_data(as_text=True)
    assert "https://example.org/h" in listed and hook.secret not in listed
    bad = client.post(path, data={"csrf_token": csrf_token(client, path), "url": "ftp://x",
                                  "events": ["board.changed"]})
    assert bad.status_code == 400

    login(client, rival)
    assert client.get(path).status_code == 403
    token = csrf_token(client, "/organizer/c/theirs/webhooks")
    assert client.post(path, data={"csrf_token": token, "url": "https://evil.example/h",
                                   "events": ["board.changed"]}).status_code == 403
    assert client.post(f"/organizer/webhooks/{hook.id}/delete",
                       data={"csrf_token": token, "slug": "mine"}).status_code == 403
    assert client.get("/organizer/phases/999999/announce").status_code == 404
    ctx.session.expire_all()
    assert [h.url for h in ctx.session.scalars(select(Webhook))] == ["https://example.org/h"]
    login(client, owner)
    client.post(f"/organizer/webhooks/{hook.id}/delete", data={"csrf_token": csrf_token(client, path), "slug": "mine"})
    assert ctx.session.scalars(select(Webhook)).all() == []
