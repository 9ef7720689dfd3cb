"""An organizer's notices (docs/NOTIFY.md): announcements to a phase's participants, and the competition's webhooks.

Only the competition's managers (access.py) see or change any of it, and every change is
written to the audit log. The rows and their delivery are notify's.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import delete, select

from leaderboard.accounts import Actor, audit, managed_competition, managed_phase
from leaderboard.accounts.access import ensure_can_manage
from leaderboard.models import Competition, Webhook, WebhookDelivery
from leaderboard.notify import announcements, mail_enabled, webhooks
from leaderboard.platform import Conflict, InvalidInput, NotFound, ServiceContext

MAX_SUBJECT = 200
MAX_BODY = 20000
LOG_ROWS = 50


@dataclass(frozen=True)
class WebhookView:
    """A webhook as its managers see it, with its latest deliveries (newest first)."""

    webhook: Webhook
    deliveries: list[WebhookDelivery]


def audience_counts(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> dict[str, int]:
    """Return how many people each audience of the phase reaches (shown before sending)."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    return announcements.counts(ctx.session, phase=phase)


def announce(ctx: ServiceContext, *, phase_id: int, actor: Actor, audience: str, subject: str, body: str) -> int:
    """Queue an announcement to a phase's audience, audit it and commit; return how many mails were queued."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    if audience not in announcements.AUDIENCES:
        raise InvalidInput(f"The audience is one of: {', '.join(announcements.AUDIENCES)}.")
    subject, body = " ".join(subject.split()), body.strip()
    if not subject or not body:
        raise InvalidInput("An announcement needs a subject and a message.")
    if len(subject) > MAX_SUBJECT or len(body) > MAX_BODY:
        raise InvalidInput(f"The subject holds at most {MAX_SUBJECT} characters, the message {MAX_BODY}.")
    if not mail_enabled(ctx.settings):
        raise Conflict("This instance sends no mail (no TAILBOARD_SMTP_URL): announcements cannot be sent.")
    sent = announcements.queue_announcement(ctx, phase=phase, audience=audience, subject=subject, body=body,
                                            competition_title=phase.competition.title)
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"sent the announcement “{subject}” to {sent} people "
                         f"({announcements.AUDIENCES[audience]})")
    return sent


def list_webhooks(ctx: ServiceContext, *, slug: str, actor: Actor) -> list[WebhookView]:
    """Return the competition's webhooks with their latest deliveries."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    hooks = ctx.session.scalars(select(Webhook).where(Webhook.competition_id == competition.id)
                                .order_by(Webhook.id)).all()
    return [WebhookView(hook, list(ctx.session.scalars(
        select(WebhookDelivery).where(WebhookDelivery.webhook_id == hook.id)
        .order_by(WebhookDelivery.id.desc()).limit(LOG_ROWS)))) for hook in hooks]


def register_webhook(ctx: ServiceContext, *, slug: str, url: str, events: list[str], actor: Actor) -> Webhook:
    """Register an endpoint for some of the competition's events with a fresh secret, audit it and commit."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    url = check_url(url)
    chosen = [event for event in webhooks.EVENTS if event in set(events)]
    if not chosen or len(chosen) != len(set(events)):
        raise InvalidInput(f"Choose one or more events among: {', '.join(webhooks.EVENTS)}.")
    hook = Webhook(competition_id=competition.id, url=url, secret=secrets.token_hex(32), events=chosen,
                   active=True, created_by_id=audit.actor_id(actor))
    ctx.session.add(hook)
    ctx.session.flush()
    audit.record(ctx, actor=actor, competition=competition, target=f"webhook {hook.id}",
                 summary=f"registered a webhook to {urlsplit(url).netloc} for {', '.join(chosen)}")
    return hook


def delete_webhook(ctx: ServiceContext, *, webhook_id: int, actor: Actor) -> None:
    """Delete a webhook and its delivery log, audit it and commit (NotFound, Forbidden)."""
    hook = ctx.session.get(Webhook, webhook_id)
    competition = ctx.session.get(Competition, hook.competition_id) if hook is not None else None
    if hook is None or competition is None:
        raise NotFound(f"No webhook {webhook_id}.")
    ensure_can_manage(competition=competition, actor=actor)
    host = urlsplit(hook.url).netloc
    ctx.session.execute(delete(WebhookDelivery).where(WebhookDelivery.webhook_id == hook.id))
    ctx.session.delete(hook)
    audit.record(ctx, actor=actor, competition=competition, target=f"webhook {webhook_id}",
                 summary=f"deleted the webhook to {host}")


def check_url(url: str) -> str:
    """Return an http(s) URL with a host, stripped (InvalidInput otherwise)."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 2000:
        raise InvalidInput("A webhook URL is an http:// or https:// address with a host, at most 2000 characters.")
    return url
