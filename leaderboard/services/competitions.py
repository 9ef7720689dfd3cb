"""Competitions: create, list (open phases first) and edit benchmarks by slug.

Looking one up and who may manage it are access.py's.
"""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from leaderboard.db import utcnow
from leaderboard.models import Competition, User
from leaderboard.runtime import ServiceContext
from leaderboard.services import audit
from leaderboard.services.access import Actor, can_manage, ensure_organizer, managed_competition, phase_status
from leaderboard.services.errors import Conflict, InvalidInput

SLUG_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
"""A competition slug: its address /c/<slug>. The form, the API schema and the service all check this one."""
SLUG_RULE = "A slug has 1 to 64 lower-case letters, digits or dashes, and no dash at either end."
_STATUS_ORDER = {"open": 0, "upcoming": 1, "closed": 2}


def create_competition(
    ctx: ServiceContext,
    *,
    slug: str,
    title: str,
    description: str = "",
    actor: Actor,
) -> Competition:
    """Create a competition managed by actor (an organizer; OPERATOR leaves it to every organizer).

    The slug is lower-case letters, digits and inner dashes.
    """
    ensure_organizer(actor)
    slug = slug.strip()
    if not SLUG_RE.match(slug):
        raise InvalidInput(SLUG_RULE)
    title = _checked_title(title)
    if ctx.session.scalar(select(Competition.id).where(Competition.slug == slug)) is not None:
        raise Conflict(f"A competition with the slug {slug!r} already exists.")
    competition = Competition(
        slug=slug,
        title=title,
        description=description.strip(),
        created_by_id=actor.id if isinstance(actor, User) else None,
    )
    ctx.session.add(competition)
    try:
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict(f"A competition with the slug {slug!r} already exists.") from None
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {slug}",
                 summary=f"created the competition “{title}”")
    return competition


def update_competition(
    ctx: ServiceContext, *, slug: str, actor: Actor, title: str | None = None, description: str | None = None
) -> Competition:
    """Change a competition's title and/or description (Forbidden unless actor manages it)."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    if title is not None:
        competition.title = _checked_title(title)
    if description is not None:
        competition.description = description.strip()
    changed = [name for name, value in (("title", title), ("description", description)) if value is not None]
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {slug}",
                 summary=f"edited the competition ({', '.join(changed) or 'nothing'})")
    return competition


def list_competitions(
    ctx: ServiceContext, *, managed_by: Actor | None = None, now: datetime | None = None
) -> list[Competition]:
    """Return competitions, open phase first, then upcoming, then closed; newest first within.

    With managed_by, only those that actor manages (the organizer dashboard).
    """
    now = now or utcnow()
    competitions = list(
        ctx.session.scalars(
            select(Competition).options(selectinload(Competition.phases)).order_by(Competition.created_at.desc(),
                                                                                   Competition.id.desc())
        )
    )
    if managed_by is not None:
        competitions = [c for c in competitions if can_manage(c, managed_by)]
    return sorted(competitions, key=lambda c: _best_status_rank(c, now))


def _checked_title(title: str) -> str:
    """Return the trimmed title, or raise InvalidInput unless it has 1 to 200 characters."""
    title = title.strip()
    if not title or len(title) > 200:
        raise InvalidInput("A title has 1 to 200 characters.")
    return title


def _best_status_rank(competition: Competition, now: datetime) -> int:
    """Return 0 with an open phase, 1 with an upcoming one, 2 otherwise (no phases counts as upcoming)."""
    if not competition.phases:
        return _STATUS_ORDER["upcoming"]
    return min(_STATUS_ORDER[phase_status(p, now)] for p in competition.phases)
