"""Competitions: create, list (open phases first) and look up benchmarks by slug."""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from leaderboard.db import utcnow
from leaderboard.models import Competition, User
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import Conflict, InvalidInput, NotFound
from leaderboard.services.phases import phase_status

SLUG_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_STATUS_ORDER = {"open": 0, "upcoming": 1, "closed": 2}


def create_competition(
    ctx: ServiceContext,
    *,
    slug: str,
    title: str,
    description: str = "",
    created_by: User | None = None,
) -> Competition:
    """Create a competition; the slug is lower-case letters, digits and inner dashes."""
    slug = slug.strip()
    if not SLUG_RE.match(slug):
        raise InvalidInput("A slug has 1 to 64 lower-case letters, digits or dashes, and no dash at either end.")
    title = title.strip()
    if not title or len(title) > 200:
        raise InvalidInput("A title has 1 to 200 characters.")
    if ctx.session.scalar(select(Competition.id).where(Competition.slug == slug)) is not None:
        raise Conflict(f"A competition with the slug {slug!r} already exists.")
    competition = Competition(
        slug=slug,
        title=title,
        description=description.strip(),
        created_by_id=created_by.id if created_by is not None else None,
    )
    ctx.session.add(competition)
    try:
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict(f"A competition with the slug {slug!r} already exists.") from None
    return competition


def update_competition(
    ctx: ServiceContext, *, slug: str, title: str | None = None, description: str | None = None
) -> Competition:
    """Change a competition's title and/or description."""
    competition = get_competition(ctx, slug)
    if title is not None:
        title = title.strip()
        if not title or len(title) > 200:
            raise InvalidInput("A title has 1 to 200 characters.")
        competition.title = title
    if description is not None:
        competition.description = description.strip()
    ctx.session.commit()
    return competition


def list_competitions(ctx: ServiceContext, *, now: datetime | None = None) -> list[Competition]:
    """Return every competition: those with an open phase first, then upcoming, then closed; newest first within."""
    now = now or utcnow()
    competitions = list(
        ctx.session.scalars(
            select(Competition).options(selectinload(Competition.phases)).order_by(Competition.created_at.desc(),
                                                                                   Competition.id.desc())
        )
    )
    return sorted(competitions, key=lambda c: _best_status_rank(c, now))


def get_competition(ctx: ServiceContext, slug: str) -> Competition:
    """Return the competition with this slug, else raise NotFound."""
    competition = ctx.session.scalar(
        select(Competition).options(selectinload(Competition.phases)).where(Competition.slug == slug)
    )
    if competition is None:
        raise NotFound(f"No competition {slug!r}.")
    return competition


def _best_status_rank(competition: Competition, now: datetime) -> int:
    """Return 0 with an open phase, 1 with an upcoming one, 2 otherwise (no phases counts as upcoming)."""
    if not competition.phases:
        return _STATUS_ORDER["upcoming"]
    return min(_STATUS_ORDER[phase_status(p, now)] for p in competition.phases)
