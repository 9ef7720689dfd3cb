"""The mail outbox: ``send_mail`` writes a row in the caller's transaction; a background sender delivers it.

A mail is a row (models.MailOutbox) committed with the event that causes it (an account
created, and later a submission scored, an announcement), so a request never waits for
an SMTP server, a rolled-back event sends nothing, and a restart loses nothing. The
sender (leaderboard/workers/mail_sender.py in each serving process, or Celery beat's
``tailboard.send_mail``) calls ``deliver_due``: each due row is claimed with one
conditional UPDATE that moves its next attempt CLAIM_SECONDS ahead, so several senders
never send it twice at once, and a sender that dies mid-send leaves it due again later
(a mail may then arrive twice, never zero times). A failure is retried after a
doubling delay (RETRY_FIRST up to RETRY_MAX) until GIVE_UP_AFTER, or given up at once
when the server refuses it for good (a 5xx answer). Without TAILBOARD_SMTP_URL nothing is
written: mail is off, and the caller's event goes on without it.
"""

from __future__ import annotations

import logging
import smtplib
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Protocol

from sqlalchemy import select, update

from leaderboard.models import MailOutbox
from leaderboard.platform import ServiceContext, Settings
from leaderboard.platform.db import utcnow
from leaderboard.platform.smtp import is_permanent

log = logging.getLogger(__name__)

CLAIM_SECONDS = 300.0
RETRY_FIRST = timedelta(minutes=1)
RETRY_MAX = timedelta(hours=1)
GIVE_UP_AFTER = timedelta(hours=24)
BATCH = 50
MAX_ERROR = 2000


class Transport(Protocol):
    """Something that delivers one mail (leaderboard.platform.smtp.SmtpTransport, or a test's)."""

    def send(self, message: EmailMessage) -> None:
        """Deliver the message; raise smtplib.SMTPException or OSError when it was not taken."""
        ...


def mail_enabled(settings: Settings) -> bool:
    """Return whether this instance sends mail (TAILBOARD_SMTP_URL is set)."""
    return bool(settings.smtp_url)


def send_mail(ctx: ServiceContext, *, to: str, subject: str, body: str, kind: str) -> MailOutbox | None:
    """Queue one plain-text mail in the caller's transaction (sent after it commits); None when mail is off."""
    if not mail_enabled(ctx.settings):
        log.info("mail is off (no TAILBOARD_SMTP_URL): a %s mail is not sent", kind)
        return None
    row = MailOutbox(recipient=to, subject=" ".join(subject.split())[:300], body=body, kind=kind[:32],
                     created_at=utcnow(), attempts=0, next_attempt_at=utcnow())
    ctx.session.add(row)
    return row


def deliver_due(ctx: ServiceContext, *, transport: Transport, now: datetime | None = None) -> int:
    """Send up to BATCH due mails through transport; return how many were sent."""
    now = now or utcnow()
    due = list(ctx.session.scalars(
        select(MailOutbox.id).where(MailOutbox.sent_at.is_(None), MailOutbox.next_attempt_at <= now)
        .order_by(MailOutbox.next_attempt_at, MailOutbox.id).limit(BATCH)))
    ctx.session.rollback()  # end the read before the claims: each claim is its own short transaction
    return sum(_deliver(ctx, mail_id, transport=transport, now=now) for mail_id in due)


def _claim(ctx: ServiceContext, mail_id: int, *, now: datetime) -> MailOutbox | None:
    """Take one due mail for CLAIM_SECONDS (one conditional UPDATE); None when another sender has it."""
    claimed = ctx.session.execute(
        update(MailOutbox)
        .where(MailOutbox.id == mail_id, MailOutbox.sent_at.is_(None), MailOutbox.next_attempt_at <= now)
        .values(attempts=MailOutbox.attempts + 1, next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
        .execution_options(synchronize_session=False)
    ).rowcount == 1  # type: ignore[attr-defined]
    ctx.session.commit()
    return ctx.session.get(MailOutbox, mail_id) if claimed else None


def _deliver(ctx: ServiceContext, mail_id: int, *, transport: Transport, now: datetime) -> bool:
    """Claim and send one mail, recording success or when to try again; return whether it was sent."""
    row = _claim(ctx, mail_id, now=now)
    if row is None:
        return False
    mail = message(row, sender=ctx.settings.mail_from or "")
    ctx.session.commit()  # no transaction stays open while the SMTP server answers
    try:
        transport.send(mail)
    except (smtplib.SMTPException, OSError) as error:
        _failed(ctx, row, error, now=now)
        return False
    row.sent_at, row.next_attempt_at, row.last_error = utcnow(), None, None
    ctx.session.commit()
    return True


def _failed(ctx: ServiceContext, row: MailOutbox, error: Exception, *, now: datetime) -> None:
    """Record a failed attempt: try again after the next delay, or give up (a refusal, or past GIVE_UP_AFTER)."""
    row.last_error = f"{type(error).__name__}: {error}"[:MAX_ERROR]
    retry_at = now + retry_delay(row.attempts)
    if is_permanent(error) or retry_at - row.created_at > GIVE_UP_AFTER:
        row.next_attempt_at = None
        log.error("gave up mail %s (%s) after %d attempt(s): %s", row.id, row.kind, row.attempts, row.last_error)
    else:
        row.next_attempt_at = retry_at
        log.warning("mail %s (%s) not sent (attempt %d), retried at %s: %s", row.id, row.kind, row.attempts,
                    f"{retry_at:%Y-%m-%d %H:%M:%S}", row.last_error)
    ctx.session.commit()


def retry_delay(attempts: int) -> timedelta:
    """Return how long to wait after the attempts-th failed attempt: RETRY_FIRST, doubling, at most RETRY_MAX."""
    return min(RETRY_MAX, RETRY_FIRST * 2 ** max(0, min(attempts - 1, 20)))


def message(row: MailOutbox, *, sender: str) -> EmailMessage:
    """Return the outbox row as a plain-text UTF-8 mail from sender."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = row.recipient
    mail["Subject"] = row.subject
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = make_msgid(idstring=f"tailboard.{row.id}", domain=sender.rpartition("@")[2] or None)
    mail["Auto-Submitted"] = "auto-generated"
    mail.set_content(row.body)
    return mail
