"""The audit log (docs/ORGANIZING.md): one row per organizer action on a competition, read by its managers only.

``record`` is the one way in, for every service that changes a competition on an
organizer's behalf (web, API and CLI alike). The CLI acts as the operator, written as
"operator (<OS user>)". Summaries are written for managers: they may name a phase, a
submission and a reason, never a label. Nothing here is shown to participants.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from leaderboard.accounts.access import Actor, Operator, managed_competition
from leaderboard.models import AuditEntry, Competition, User
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow

MAX_SUMMARY = 500
MAX_TARGET = 200


@dataclass(frozen=True)
class AuditRow:
    """One audit entry as a manager reads it."""

    at: datetime
    actor: str
    target: str
    summary: str


def actor_name(actor: Actor) -> str:
    """Return how the log names an actor: a user's display name, or the operator with the OS user."""
    if isinstance(actor, Operator):
        try:
            return f"operator ({getpass.getuser()})"
        except (KeyError, OSError):  # no name for this uid (a container): the operator all the same
            return "operator"
    return actor.display_name


def actor_id(actor: Actor) -> int | None:
    """Return the user id of an actor, None for the operator."""
    return actor.id if isinstance(actor, User) else None


def record(ctx: ServiceContext, *, actor: Actor, competition: Competition, target: str, summary: str) -> AuditEntry:
    """Write one audit entry and commit it (with whatever the caller has pending)."""
    entry = AuditEntry(competition_id=competition.id, at=utcnow(), actor_id=actor_id(actor),
                       actor_name=actor_name(actor)[:120], target=target[:MAX_TARGET],
                       summary=" ".join(summary.split())[:MAX_SUMMARY])
    ctx.session.add(entry)
    ctx.session.commit()
    return entry


def phase_target(phase_id: int, name: str) -> str:
    """Return the target text of a phase: 'phase 3 “Camping”'."""
    return f"phase {phase_id} “{name}”"


def audit_log(ctx: ServiceContext, *, slug: str, actor: Actor, limit: int = 500) -> list[AuditRow]:
    """Return a competition's audit entries, newest first (Forbidden unless actor manages it)."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    rows = ctx.session.scalars(
        select(AuditEntry).where(AuditEntry.competition_id == competition.id)
        .order_by(AuditEntry.at.desc(), AuditEntry.id.desc()).limit(limit))
    return [AuditRow(at=row.at, actor=row.actor_name, target=row.target, summary=row.summary) for row in rows]
