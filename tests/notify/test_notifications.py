"""Notifications end to end: a scored submission's mail and signed webhook, the off switch, retries, announcements.

Mail goes to a real SMTP server on loopback (tests/smtp_server.py), webhooks to a real HTTP
receiver on loopback (webhook_receiver.py); every test runs on both databases.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from smtp_server import MailServer
from sqlalchemy import func, select
from webhook_receiver import Receiver

from leaderboard.accounts import OPERATOR
from leaderboard.models import AuditEntry, MailOutbox, Participation, Submission, Webhook, WebhookDelivery
from leaderboard.notify import outbox, preferences, webhooks
from leaderboard.organizing import notifications, phases
from leaderboard.platform import Forbidden, NotFound, ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.smtp import SmtpTransport, parse_smtp_url
from leaderboard.submissions import accept_submission

SENDER = "tailboard@example.org"
SCORED_DATA_KEYS = {"submission_id", "phase_id", "status", "rescored"}


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    """Return a running SMTP server on loopback."""
    with MailServer() as server:
        yield server


@pytest.fixture
def settings_overrides(mail_server: MailServer) -> dict[str, Any]:
    """Send mail to the loopback server."""
    return {"smtp_url": f"smtp://127.0.0.1:{mail_server.port}", "mail_from": SENDER}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """Return a running webhook receiver on loopback."""
    with Receiver() as server:
        yield server


@pytest.fixture
def make_user(ctx: ServiceContext, make_user: Any) -> Any:
    """Return a factory of confirmed accounts whose confirmation mail is already gone (mail is on here)."""

    def make(*args: Any, **kwargs: Any) -> Any:
        user = make_user(*args, **kwargs)
        user.email_confirmed_at = utcnow()
        ctx.session.execute(MailOutbox.__table__.delete().where(MailOutbox.recipient == user.email))
        ctx.session.commit()
        return user

    return make


@pytest.fixture
def make_organizer(make_user: Any) -> Any:
    """Return a factory of confirmed organizer accounts."""
    return lambda email=None, **kwargs: make_user(email, is_organizer=True, **kwargs)


def send_all(ctx: ServiceContext) -> tuple[int, int]:
    """Run both senders once; return (mails sent, webhooks taken)."""
    transport = SmtpTransport(parse_smtp_url(ctx.settings.smtp_url or ""))
    return outbox.deliver_due(ctx, transport=transport), webhooks.deliver_due(ctx)


def upload(ctx: ServiceContext, phase: Any, user: Any, content: bytes) -> Submission:
    """Accept content as an upload by user (scored inline)."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def hook(ctx: ServiceContext, competition: Any, url: str, events: list[str] | None = None) -> Webhook:
    """Register a webhook as the operator."""
    return notifications.register_webhook(ctx, slug=competition.slug, url=url,
                                          events=events or ["submission.scored"], actor=OPERATOR)


def test_scoring_sends_one_mail_and_one_signed_webhook(ctx, make_phase, make_user, make_predictions,
                                                       mail_server, receiver) -> None:
    phase = make_phase()
    registered = hook(ctx, phase.competition, receiver.url)
    user = make_user("ada@example.org")
    submission = upload(ctx, phase, user, make_predictions(wrong=1))
    assert ctx.session.get(Submission, submission.id).status == "scored"
    assert send_all(ctx) == (1, 1)
    assert send_all(ctx) == (0, 0)  # each is sent once
    mail = mail_server.wait_for("ada@example.org")
    assert f"Submission {submission.id}" in mail["Subject"] and "scored" in mail["Subject"]
    assert [r for r, _ in mail_server.messages] == [["ada@example.org"]]
    (post,) = receiver.wait_for(1)
    assert webhooks.verify(registered.secret, post.body, post.headers["X-Tailboard-Signature"])
    assert not webhooks.verify("another-secret", post.body, post.headers["X-Tailboard-Signature"])
    payload = json.loads(post.body)
    assert set(payload) == {"id", "event", "created_at", "competition", "data"}
    assert payload["id"] == post.headers["X-Tailboard-Delivery"] and post.headers["X-Tailboard-Timestamp"].isdigit()
    assert (payload["event"], payload["competition"]) == ("submission.scored", phase.competition.slug)
    assert payload["data"] == {"submission_id": submission.id, "phase_id": phase.id, "status": "scored",
                               "rescored": False}


def test_the_off_switch_suppresses_the_mail_but_not_the_webhook(ctx, make_phase, make_user, make_predictions,
                                                                 mail_server, receiver) -> None:
    phase = make_phase()
    hook(ctx, phase.competition, receiver.url)
    quiet, loud = make_user("quiet@example.org"), make_user("loud@example.org")
    preferences.set_submission_mail(ctx.session, user_id=quiet.id, on=False)
    assert preferences.submission_mail_on(ctx.session, user_id=loud.id)
    upload(ctx, phase, quiet, make_predictions())
    upload(ctx, phase, loud, make_predictions(wrong=2))
    assert send_all(ctx) == (1, 2)
    assert [r for r, _ in mail_server.messages] == [["loud@example.org"]]


def test_rescoring_sends_a_webhook_but_no_second_mail(ctx, make_phase, make_user, make_predictions,
                                                     mail_server, receiver) -> None:
    phase = make_phase()
    hook(ctx, phase.competition, receiver.url)
    submission = upload(ctx, phase, make_user("ada@example.org"), make_predictions())
    phases.rescore_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    assert send_all(ctx)[0] == 1
    rescored = [json.loads(p.body)["data"]["rescored"] for p in receiver.posts
                if json.loads(p.body)["data"]["submission_id"] == submission.id]
    assert rescored == [False, True]


def test_a_receiver_answering_500_gets_retries_with_backoff_and_the_log_shows_them(
        ctx, make_phase, make_user, make_predictions, mail_server) -> None:
    with Receiver(answers=[500, 503]) as receiver:
        phase = make_phase()
        hook(ctx, phase.competition, receiver.url)
        upload(ctx, phase, make_user(), make_predictions())
        now = utcnow()
        assert webhooks.deliver_due(ctx, now=now) == 0
        row = ctx.session.scalars(select(WebhookDelivery)).one()
        ctx.session.refresh(row)
        assert (row.attempts, row.last_status, row.next_attempt_at) == (1, 500, now + webhooks.RETRY_FIRST)
        assert webhooks.deliver_due(ctx, now=now + timedelta(seconds=30)) == 0  # not due yet: nothing posted
        assert len(receiver.posts) == 1
        second = now + webhooks.RETRY_FIRST
        assert webhooks.deliver_due(ctx, now=second) == 0
        ctx.session.refresh(row)
        assert (row.attempts, row.last_status, row.next_attempt_at) == (2, 503, second + 2 * webhooks.RETRY_FIRST)
        assert "503" in (row.last_error or "")
        assert webhooks.deliver_due(ctx, now=second + 2 * webhooks.RETRY_FIRST) == 1
        ctx.session.refresh(row)
        assert (row.attempts, row.last_status, row.next_attempt_at) == (3, 200, None) and row.delivered_at
        assert len({p.headers["X-Tailboard-Delivery"] for p in receiver.posts}) == 1  # the same delivery
        assert len({p.body for p in receiver.posts}) == 1 and len(receiver.by_delivery()) == 1
        (view,) = notifications.list_webhooks(ctx, slug=phase.competition.slug, actor=OPERATOR)
        assert [(d.attempts, d.last_status) for d in view.deliveries] == [(3, 200)]


def test_an_unreachable_receiver_is_retried_not_lost(ctx, make_phase, make_user, make_predictions) -> None:
    from ports import free_port

    phase = make_phase()
    registered = hook(ctx, phase.competition, f"http://127.0.0.1:{free_port()}/hook")
    upload(ctx, phase, make_user(), make_predictions())
    assert webhooks.deliver_due(ctx) == 0
    row = ctx.session.scalars(select(WebhookDelivery).where(WebhookDelivery.webhook_id == registered.id)).one()
    ctx.session.refresh(row)
    assert row.delivered_at is None and row.next_attempt_at is not None and "Error" in (row.last_error or "")


def test_phase_events_and_coalesced_board_changes(ctx, make_phase, make_user, make_predictions, receiver) -> None:
    phase = make_phase(status="upcoming")
    hook(ctx, phase.competition, receiver.url, ["phase.opened", "phase.closed", "board.changed"])
    phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    upload(ctx, phase, make_user(), make_predictions())
    upload(ctx, phase, make_user(), make_predictions())
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    events = list(ctx.session.scalars(select(WebhookDelivery.event).order_by(WebhookDelivery.id)))
    assert events == ["phase.opened", "board.changed", "phase.closed"]  # one pending board.changed at a time
    assert webhooks.deliver_due(ctx) == 3
    phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id, confirm=True)
    assert list(ctx.session.scalars(select(WebhookDelivery.event).where(WebhookDelivery.delivered_at.is_(None))
                                    .order_by(WebhookDelivery.id))) == ["phase.opened", "board.changed"]


def test_a_rolled_back_event_writes_no_delivery(ctx, make_phase, receiver) -> None:
    phase = make_phase()
    hook(ctx, phase.competition, receiver.url, ["phase.closed"])
    from leaderboard.notify import events

    events.phase_changed(ctx, phase=phase, event="phase.closed")
    ctx.session.rollback()
    assert ctx.session.scalar(select(func.count()).select_from(WebhookDelivery)) == 0


def test_announcement_filters_reach_exactly_the_right_people(ctx, make_phase, make_user, make_predictions,
                                                             make_organizer, mail_server) -> None:
    owner = make_organizer("owner@example.org")
    from leaderboard.organizing import competitions

    competition = competitions.create_competition(ctx, slug="ann", title="Ann", description="", actor=owner)
    phase = make_phase(competition)
    other_phase = make_phase(competition, name="Phase 2")
    joined, submitted, chose, elsewhere, _ = (make_user(f"{n}@example.org") for n in
                                             ("joined", "submitted", "chose", "elsewhere", "bystander"))
    ctx.session.add(Participation(competition_id=competition.id, user_id=joined.id, status="approved"))
    ctx.session.commit()
    upload(ctx, phase, submitted, make_predictions())
    chosen = upload(ctx, phase, chose, make_predictions(wrong=1))
    ctx.session.get(Submission, chosen.id).selected = True
    ctx.session.commit()
    upload(ctx, other_phase, elsewhere, make_predictions())
    assert notifications.audience_counts(ctx, phase_id=phase.id, actor=owner) == {
        "joined": 3, "submitted": 2, "selected": 1}
    ctx.session.execute(MailOutbox.__table__.delete())  # the submission mails
    ctx.session.commit()

    expected = {"joined": {"joined", "submitted", "chose"}, "submitted": {"submitted", "chose"}, "selected": {"chose"}}
    for audience, people in expected.items():
        sent = notifications.announce(ctx, phase_id=phase.id, actor=owner, audience=audience,
                                      subject=f"News for {audience}", body="The test set is fixed.")
        assert sent == len(people)
        recipients = ctx.session.scalars(select(MailOutbox.recipient).where(
            MailOutbox.subject == f"News for {audience}")).all()
        assert sorted(recipients) == sorted(f"{n}@example.org" for n in people)
    summaries = ctx.session.scalars(select(AuditEntry.summary).where(AuditEntry.summary.like("sent the announce%")))
    assert len(list(summaries)) == 3
    outbox.deliver_due(ctx, transport=SmtpTransport(parse_smtp_url(ctx.settings.smtp_url or "")))
    assert "The test set is fixed." in mail_server.wait_for("chose@example.org").get_payload(decode=True).decode()


def test_only_managers_announce_or_see_and_change_webhooks(ctx, make_phase, make_organizer, make_user,
                                                           receiver) -> None:
    from leaderboard.organizing import competitions

    owner, rival = make_organizer(), make_organizer()
    competition = competitions.create_competition(ctx, slug="mine", title="Mine", description="", actor=owner)
    phase = make_phase(competition)
    registered = notifications.register_webhook(ctx, slug="mine", url=receiver.url, events=["board.changed"],
                                                actor=owner)
    for who in (rival, make_user()):
        with pytest.raises(Forbidden):
            notifications.list_webhooks(ctx, slug="mine", actor=who)
        with pytest.raises(Forbidden):
            notifications.delete_webhook(ctx, webhook_id=registered.id, actor=who)
        with pytest.raises(Forbidden):
            notifications.register_webhook(ctx, slug="mine", url=receiver.url, events=["board.changed"], actor=who)
        with pytest.raises(Forbidden):
            notifications.announce(ctx, phase_id=phase.id, actor=who, audience="joined", subject="s", body="b")
        with pytest.raises(Forbidden):
            notifications.audience_counts(ctx, phase_id=phase.id, actor=who)
    assert [v.webhook.id for v in notifications.list_webhooks(ctx, slug="mine", actor=owner)] == [registered.id]
    notifications.delete_webhook(ctx, webhook_id=registered.id, actor=owner)
    with pytest.raises(NotFound):
        notifications.delete_webhook(ctx, webhook_id=registered.id, actor=owner)
    assert notifications.list_webhooks(ctx, slug="mine", actor=owner) == []


@pytest.mark.parametrize("url", ["ftp://example.org/x", "javascript:alert(1)", "http:///nohost", "  "])
def test_a_webhook_needs_an_http_url_and_known_events(ctx, make_competition, url) -> None:
    from leaderboard.platform import InvalidInput

    competition = make_competition()
    with pytest.raises(InvalidInput):
        notifications.register_webhook(ctx, slug=competition.slug, url=url, events=["board.changed"],
                                       actor=OPERATOR)
    with pytest.raises(InvalidInput):
        notifications.register_webhook(ctx, slug=competition.slug, url="https://example.org/h",
                                       events=["submission.labels"], actor=OPERATOR)


def test_beat_posts_webhooks_with_or_without_mail(settings, monkeypatch) -> None:
    import dataclasses

    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/13")  # the task's name reads the app's config

    from leaderboard.workers.celery_app import _beat_schedule, send_webhooks_task

    assert _beat_schedule(settings)["webhooks"]["task"] == "tailboard.send_webhooks" == send_webhooks_task.name
    no_mail = dataclasses.replace(settings, smtp_url=None, mail_from=None)
    assert "mail" not in _beat_schedule(no_mail) and "webhooks" in _beat_schedule(no_mail)
    assert "webhooks" not in _beat_schedule(dataclasses.replace(settings, mail_seconds=0))


def test_a_submission_failing_after_a_label_replacement_mails_its_owner_once(ctx, make_phase, make_user,
                                                                            make_predictions, labels_file,
                                                                            mail_server) -> None:
    phase = make_phase()
    quiet, loud = make_user("quiet@example.org"), make_user("loud@example.org")
    preferences.set_submission_mail(ctx.session, user_id=quiet.id, on=False)
    upload(ctx, phase, quiet, make_predictions())
    failing = upload(ctx, phase, loud, make_predictions())
    ctx.session.execute(MailOutbox.__table__.delete())  # the scored mails
    ctx.session.commit()
    fewer = b"".join(line + b"\n" for line in labels_file().splitlines()[:6])
    phases.replace_labels(ctx, actor=OPERATOR, phase_id=phase.id, labels=fewer)
    ctx.session.expire_all()
    assert ctx.session.get(Submission, failing.id).status == "failed"
    assert send_all(ctx)[0] == 1
    mail = mail_server.wait_for("loud@example.org")
    assert f"Submission {failing.id}" in mail["Subject"] and "could not be scored" in mail["Subject"]
    text = mail.get_payload(decode=True).decode()
    assert "q7" not in text and "q8" not in text  # which ids failed is on the submission's page, not in a mail
    assert [r for r, _ in mail_server.messages] == [["loud@example.org"]]
