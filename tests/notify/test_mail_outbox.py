"""The mail outbox: rows written with their event, delivered to a real SMTP server, retried, never lost.

Every test runs against aiosmtpd on loopback (tests/smtp_server.py) and on both databases.
"""

from __future__ import annotations

import smtplib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from ports import free_port
from smtp_server import MailServer, self_signed
from sqlalchemy import func, select

from leaderboard.models import MailOutbox
from leaderboard.notify import outbox
from leaderboard.platform import ServiceContext, Settings
from leaderboard.platform.db import utcnow
from leaderboard.platform.smtp import SmtpTransport, parse_smtp_url
from leaderboard.workers.celery_app import _beat_schedule
from leaderboard.workers.mail_sender import MailSender

SENDER = "tailboard@example.org"


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    """Return a running SMTP server on loopback."""
    with MailServer() as server:
        yield server


@pytest.fixture
def settings_overrides(mail_server: MailServer) -> dict[str, Any]:
    """Send mail to the loopback server."""
    return {"smtp_url": f"smtp://127.0.0.1:{mail_server.port}", "mail_from": SENDER}


def queue(ctx: ServiceContext, to: str = "ada@example.org", kind: str = "test") -> int:
    """Queue one mail and commit it; return its row id."""
    row = outbox.send_mail(ctx, to=to, subject="Hello  there", body="Línea uno.\nLine two.\n", kind=kind)
    assert row is not None
    ctx.session.commit()
    return row.id


def transport(ctx: ServiceContext) -> SmtpTransport:
    """Return the instance's SMTP transport."""
    return SmtpTransport(parse_smtp_url(ctx.settings.smtp_url or ""))


def test_a_queued_mail_reaches_the_smtp_server_once(ctx: ServiceContext, mail_server: MailServer) -> None:
    mail_id = queue(ctx)
    assert mail_server.messages == []  # writing the row sends nothing
    assert outbox.deliver_due(ctx, transport=transport(ctx)) == 1
    message = mail_server.wait_for("ada@example.org")
    assert (message["From"], message["Subject"], message["Auto-Submitted"]) == (SENDER, "Hello there",
                                                                                 "auto-generated")
    assert message.get_payload(decode=True).decode("utf-8").splitlines() == ["Línea uno.", "Line two."]
    row = ctx.session.get(MailOutbox, mail_id)
    assert row.sent_at is not None and row.attempts == 1 and row.next_attempt_at is None
    assert outbox.deliver_due(ctx, transport=transport(ctx)) == 0
    assert len(mail_server.messages) == 1


def test_a_rolled_back_event_sends_no_mail(ctx: ServiceContext) -> None:
    outbox.send_mail(ctx, to="ada@example.org", subject="s", body="b", kind="test")
    ctx.session.rollback()
    assert ctx.session.scalar(select(func.count()).select_from(MailOutbox)) == 0


@pytest.mark.parametrize("settings_overrides", [{"smtp_url": None, "mail_from": None}])
def test_without_smtp_no_mail_is_written(ctx: ServiceContext) -> None:
    assert outbox.send_mail(ctx, to="ada@example.org", subject="s", body="b", kind="test") is None
    ctx.session.commit()
    assert ctx.session.scalar(select(func.count()).select_from(MailOutbox)) == 0


def test_a_server_that_is_away_gets_the_mail_later_with_backoff(ctx: ServiceContext,
                                                                mail_server: MailServer) -> None:
    mail_id = queue(ctx)
    away = SmtpTransport(parse_smtp_url(f"smtp://127.0.0.1:{free_port()}?timeout=5"))
    now = utcnow()
    assert outbox.deliver_due(ctx, transport=away, now=now) == 0
    row = ctx.session.get(MailOutbox, mail_id)
    ctx.session.refresh(row)
    assert row.sent_at is None and row.attempts == 1 and "Error" in (row.last_error or "")
    assert row.next_attempt_at == now + outbox.RETRY_FIRST
    assert outbox.deliver_due(ctx, transport=transport(ctx), now=now + timedelta(seconds=30)) == 0  # not due yet
    assert outbox.deliver_due(ctx, transport=transport(ctx), now=now + outbox.RETRY_FIRST) == 1
    assert mail_server.wait_for("ada@example.org")["Subject"] == "Hello there"


def test_retry_delays_double_up_to_an_hour() -> None:
    delays = [outbox.retry_delay(n) for n in (1, 2, 3, 7, 8, 50)]
    assert delays == [timedelta(minutes=1), timedelta(minutes=2), timedelta(minutes=4), timedelta(hours=1),
                      timedelta(hours=1), timedelta(hours=1)]


def test_a_mail_the_server_refuses_for_good_is_given_up_at_once(ctx: ServiceContext,
                                                                mail_server: MailServer) -> None:
    mail_server.recorder.refuse_with = "550 mailbox unavailable"
    mail_id = queue(ctx)
    assert outbox.deliver_due(ctx, transport=transport(ctx)) == 0
    row = ctx.session.get(MailOutbox, mail_id)
    ctx.session.refresh(row)
    assert row.sent_at is None and row.next_attempt_at is None and "550" in (row.last_error or "")
    assert outbox.deliver_due(ctx, transport=transport(ctx), now=utcnow() + timedelta(days=2)) == 0


def test_a_mail_failing_for_a_day_is_given_up(ctx: ServiceContext) -> None:
    mail_id = queue(ctx)
    away = SmtpTransport(parse_smtp_url(f"smtp://127.0.0.1:{free_port()}?timeout=5"))
    row = ctx.session.get(MailOutbox, mail_id)
    row.created_at, row.next_attempt_at, row.attempts = utcnow() - timedelta(hours=23, minutes=30), utcnow(), 9
    ctx.session.commit()
    outbox.deliver_due(ctx, transport=away)
    ctx.session.refresh(row)
    assert row.sent_at is None and row.next_attempt_at is None and row.attempts == 10


def test_a_claimed_mail_is_not_sent_by_a_second_sender(ctx: ServiceContext, runtime: Any,
                                                       mail_server: MailServer) -> None:
    mail_id = queue(ctx)
    now = utcnow()
    assert outbox._claim(ctx, mail_id, now=now) is not None  # another sender holds it and then dies
    with runtime.sessions() as session:
        assert outbox.deliver_due(runtime.context(session), transport=transport(ctx), now=now) == 0
    assert mail_server.messages == []
    later = now + timedelta(seconds=outbox.CLAIM_SECONDS)
    with runtime.sessions() as session:  # the claim lapsed: the mail is due again, not lost
        assert outbox.deliver_due(runtime.context(session), transport=transport(ctx), now=later) == 1
    assert len(mail_server.messages) == 1


def test_queued_mail_survives_a_restart_and_the_sender_thread_delivers_it(settings: Settings, runtime: Any,
                                                                         mail_server: MailServer) -> None:
    with runtime.sessions() as session:
        queue(runtime.context(session), to="restart@example.org")
    from leaderboard.board import board_changed
    from leaderboard.platform import build_runtime
    from leaderboard.submissions import score_submission

    # another process, after a restart
    fresh = build_runtime(settings, score=score_submission, board_changed=board_changed)
    sender = MailSender(fresh)
    sender.start()
    try:
        assert mail_server.wait_for("restart@example.org")["To"] == "restart@example.org"
    finally:
        sender.stop()
        fresh.engine.dispose()


def test_beat_sends_the_outbox_only_while_mail_is_on(settings: Settings) -> None:
    assert _beat_schedule(settings)["mail"]["task"] == "tailboard.send_mail"
    off = Settings.from_env({}, **{**settings.__dict__, "smtp_url": None, "mail_from": None})
    assert "mail" not in _beat_schedule(off)


@pytest.mark.backends("sqlite")
def test_login_and_starttls_with_a_trusted_certificate(tmp_path: Path) -> None:
    context, cert = self_signed(tmp_path)
    with MailServer(login=("mailer", "s3cret/+"), tls=context) as server:
        url = f"smtp+starttls://mailer:s3cret%2F%2B@127.0.0.1:{server.port}?cafile={cert}"
        SmtpTransport(parse_smtp_url(url)).send(_message("tls@example.org"))
        assert server.wait_for("tls@example.org")["Subject"] == "Hi"
        with pytest.raises(smtplib.SMTPAuthenticationError):
            bad = f"smtp+starttls://mailer:wrong@127.0.0.1:{server.port}?cafile={cert}"
            SmtpTransport(parse_smtp_url(bad)).send(_message("tls@example.org"))


@pytest.mark.backends("sqlite")
def test_implicit_tls_refuses_an_untrusted_certificate(tmp_path: Path) -> None:
    import ssl

    context, cert = self_signed(tmp_path)
    with MailServer(tls=context, implicit_tls=True) as server:
        SmtpTransport(parse_smtp_url(f"smtps://127.0.0.1:{server.port}?cafile={cert}")).send(_message("a@b.org"))
        assert server.wait_for("a@b.org")["To"] == "a@b.org"
        with pytest.raises(ssl.SSLError):
            SmtpTransport(parse_smtp_url(f"smtps://127.0.0.1:{server.port}?timeout=5")).send(_message("a@b.org"))


def _message(to: str) -> Any:
    """Return a small mail to an address."""
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = SENDER, to, "Hi"
    mail.set_content("Hello.\n")
    return mail
