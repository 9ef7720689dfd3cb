"""Organizer announcements: one mail to each participant of a phase in an audience, queued in the outbox.

Audiences: ``joined`` (approved participants of the competition and everyone who
uploaded to the phase), ``submitted`` (everyone who uploaded to the phase) and
``selected`` (everyone who chose a final submission in it). The uploader of a submission
is who submitted it; baselines count for nobody. Access and the audit log are the
caller's (organizing/notifications.py).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import Participation, Phase, Submission, User
from leaderboard.notify.outbox import send_mail
from leaderboard.platform import ServiceContext

AUDIENCES = {"joined": "everyone who joined", "submitted": "everyone who submitted",
             "selected": "everyone who selected a final submission"}
KIND = "announcement"


def recipient_ids(session: Session, *, phase: Phase, audience: str) -> set[int]:
    """Return the ids of the users in a phase's audience."""
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}")
    uploads = select(Submission.user_id).where(Submission.phase_id == phase.id, Submission.is_baseline.is_(False))
    if audience == "selected":
        return set(session.scalars(uploads.where(Submission.selected.is_(True))))
    ids = set(session.scalars(uploads))
    if audience == "joined":
        ids |= set(session.scalars(select(Participation.user_id).where(
            Participation.competition_id == phase.competition_id, Participation.status == "approved")))
    return ids


def counts(session: Session, *, phase: Phase) -> dict[str, int]:
    """Return how many people each audience of the phase reaches."""
    return {audience: len(recipient_ids(session, phase=phase, audience=audience)) for audience in AUDIENCES}


def queue_announcement(ctx: ServiceContext, *, phase: Phase, audience: str, subject: str, body: str,
                       competition_title: str) -> int:
    """Queue the announcement to every user of the audience in the caller's transaction; return how many."""
    ids = recipient_ids(ctx.session, phase=phase, audience=audience)
    users: list[User] = list(ctx.session.scalars(select(User).where(User.id.in_(ids)).order_by(User.id))) if ids else []
    footer = (f"\n\n--\nSent by the organizers of “{competition_title}” to {AUDIENCES[audience]} in the phase "
              f"“{phase.name}” on Tailboard.\n")
    sent = 0
    for user in users:
        if send_mail(ctx, to=user.email, subject=subject, body=body.rstrip() + footer, kind=KIND) is not None:
            sent += 1
    return sent
