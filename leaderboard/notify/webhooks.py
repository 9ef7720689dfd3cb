"""Webhooks: signed POSTs of a competition's events, written in the event's transaction, sent and retried later.

``enqueue`` adds one delivery row per matching webhook to the caller's session, so an
event that rolls back sends nothing and a committed one survives any restart. The body
is fixed when the row is written (the same bytes, delivery id and signature on every
attempt). ``deliver_due`` sends due rows like the mail outbox (notify/outbox.py): each is
claimed with one conditional UPDATE that moves its next attempt CLAIM_SECONDS ahead, so
two senders never post it at once; a sender killed mid-post leaves it due again later
(the receiver drops the repeat by its delivery id). A non-2xx answer or a network error
is retried after a doubling delay (RETRY_FIRST up to RETRY_MAX) until GIVE_UP_AFTER.
docs/NOTIFY.md describes the payloads and how to verify the signature.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import exists, select, update
from sqlalchemy.orm import Session

from leaderboard.models import Competition, Webhook, WebhookDelivery
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow

log = logging.getLogger(__name__)

EVENTS = ("submission.scored", "phase.opened", "phase.closed", "board.changed")
SIGNATURE_HEADER = "X-Tailboard-Signature"
CLAIM_SECONDS = 120.0
RETRY_FIRST = timedelta(minutes=1)
RETRY_MAX = timedelta(hours=1)
GIVE_UP_AFTER = timedelta(hours=24)
TIMEOUT_SECONDS = 10.0
BATCH = 50
MAX_ERROR = 500


class Transport(Protocol):
    """Something that POSTs one body (HttpTransport, or a test's)."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """POST body to url and return the HTTP status; raise OSError when nothing answered."""
        ...


class HttpTransport:
    """POST with urllib, no redirects followed, a short timeout."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """POST body to url and return the HTTP status (an error status is returned, not raised)."""
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
        try:
            with _OPENER.open(request, timeout=TIMEOUT_SECONDS) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        """Follow no redirect: a 3xx answer is a failed delivery."""
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def sign(secret: str, body: bytes) -> str:
    """Return the signature header's value for body: ``sha256=`` and the hex HMAC-SHA256 under secret."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str) -> bool:
    """Return whether a signature header's value matches body under secret (constant-time)."""
    return hmac.compare_digest(sign(secret, body), header or "")


def enqueue(session: Session, *, competition_id: int, event: str, data: dict[str, Any],
            phase_id: int | None = None, coalesce: bool = False) -> list[WebhookDelivery]:
    """Add one delivery of event to each active webhook of the competition that asked for it (no commit).

    With ``coalesce`` a webhook that still has an untried delivery of this event for this
    phase gets no second one (board.changed: one pending notice says it all).
    """
    return enqueue_each(session, competition_id=competition_id, event=event, data=[data], phase_id=phase_id,
                        coalesce=coalesce)


def enqueue_each(session: Session, *, competition_id: int, event: str, data: list[dict[str, Any]],
                 phase_id: int | None = None, coalesce: bool = False) -> list[WebhookDelivery]:
    """Add a delivery of event per item of data to each webhook that asked for it, reading the webhooks once."""
    if event not in EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    if not data:
        return []
    hooks = [hook for hook in session.scalars(select(Webhook).where(
        Webhook.competition_id == competition_id, Webhook.active.is_(True)).order_by(Webhook.id))
        if event in (hook.events or [])]
    if coalesce:
        hooks = [hook for hook in hooks if not _pending(session, hook.id, event, phase_id)]
    if not hooks:
        return []
    slug = session.scalar(select(Competition.slug).where(Competition.id == competition_id))
    now = utcnow()
    rows = []
    for item in data:
        for hook in hooks:
            delivery_id = str(uuid.uuid4())
            body = json.dumps({"id": delivery_id, "event": event, "created_at": f"{now:%Y-%m-%dT%H:%M:%S}Z",
                               "competition": slug, "data": item}, sort_keys=True, separators=(",", ":"))
            rows.append(WebhookDelivery(webhook_id=hook.id, delivery_id=delivery_id, event=event,
                                        phase_id=phase_id, body=body, created_at=now, attempts=0,
                                        next_attempt_at=now))
    session.add_all(rows)
    return rows


def _pending(session: Session, webhook_id: int, event: str, phase_id: int | None) -> bool:
    """Return whether the webhook has an untried delivery of event for the phase."""
    return bool(session.scalar(select(exists().where(
        WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.event == event,
        WebhookDelivery.phase_id == phase_id, WebhookDelivery.attempts == 0,
        WebhookDelivery.delivered_at.is_(None)))))


def headers(delivery: WebhookDelivery, secret: str) -> dict[str, str]:
    """Return the headers of one delivery: content type, event, delivery id, timestamp, signature."""
    body = delivery.body.encode("utf-8")
    return {"Content-Type": "application/json", "User-Agent": "Tailboard-Webhook/1",
            "X-Tailboard-Event": delivery.event, "X-Tailboard-Delivery": delivery.delivery_id,
            "X-Tailboard-Timestamp": str(int((delivery.created_at - datetime(1970, 1, 1)).total_seconds())),
            SIGNATURE_HEADER: sign(secret, body)}


def deliver_due(ctx: ServiceContext, *, transport: Transport | None = None, now: datetime | None = None) -> int:
    """POST up to BATCH due deliveries; return how many a receiver took (a 2xx answer)."""
    now = now or utcnow()
    due = list(ctx.session.scalars(
        select(WebhookDelivery.id).where(WebhookDelivery.delivered_at.is_(None),
                                         WebhookDelivery.next_attempt_at <= now)
        .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id).limit(BATCH)))
    ctx.session.rollback()  # each claim is its own short transaction
    sender = transport or HttpTransport()
    return sum(_deliver(ctx, row_id, transport=sender, now=now) for row_id in due)


def _claim(ctx: ServiceContext, row_id: int, *, now: datetime) -> WebhookDelivery | None:
    """Take one due delivery for CLAIM_SECONDS (one conditional UPDATE); None when another sender has it."""
    claimed = ctx.session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id == row_id, WebhookDelivery.delivered_at.is_(None),
               WebhookDelivery.next_attempt_at <= now)
        .values(attempts=WebhookDelivery.attempts + 1, next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
        .execution_options(synchronize_session=False)
    ).rowcount == 1  # type: ignore[attr-defined]
    ctx.session.commit()
    return ctx.session.get(WebhookDelivery, row_id, populate_existing=True) if claimed else None


def _deliver(ctx: ServiceContext, row_id: int, *, transport: Transport, now: datetime) -> bool:
    """Claim and POST one delivery, recording the answer; return whether the receiver took it."""
    row = _claim(ctx, row_id, now=now)
    if row is None:
        return False
    hook = ctx.session.get(Webhook, row.webhook_id)
    if hook is None or not hook.active:
        row.next_attempt_at, row.last_error = None, "the webhook was switched off"
        ctx.session.commit()
        return False
    url, body, sent_headers = hook.url, row.body.encode("utf-8"), headers(row, hook.secret)
    ctx.session.commit()  # no transaction stays open while the receiver answers
    try:
        status = transport.post(url, body, sent_headers)
    except (OSError, ValueError) as error:
        _failed(ctx, row, None, f"{type(error).__name__}: {error}", now=now)
        return False
    if 200 <= status < 300:
        row.delivered_at, row.next_attempt_at, row.last_status, row.last_error = utcnow(), None, status, None
        ctx.session.commit()
        return True
    _failed(ctx, row, status, f"the receiver answered HTTP {status}", now=now)
    return False


def _failed(ctx: ServiceContext, row: WebhookDelivery, status: int | None, error: str, *, now: datetime) -> None:
    """Record a failed attempt: try again after the next delay, or give up past GIVE_UP_AFTER."""
    row.last_status, row.last_error = status, error[:MAX_ERROR]
    retry_at = now + retry_delay(row.attempts)
    if retry_at - row.created_at > GIVE_UP_AFTER:
        row.next_attempt_at = None
        log.warning("gave up webhook delivery %s after %d attempt(s): %s", row.delivery_id, row.attempts, error)
    else:
        row.next_attempt_at = retry_at
    ctx.session.commit()


def retry_delay(attempts: int) -> timedelta:
    """Return how long to wait after the attempts-th failed attempt: RETRY_FIRST, doubling, at most RETRY_MAX."""
    return min(RETRY_MAX, RETRY_FIRST * 2 ** max(0, min(attempts - 1, 20)))
