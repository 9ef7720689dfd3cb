"""Competitions: create, list (open phases first), edit and give an owner to benchmarks by slug.

Looking one up and who may manage it are access.py's: a competition's owner
(``created_by_id``) manages it; one without an owner is the operator's alone.
"""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from leaderboard.accounts import Actor, Operator, audit, can_manage, ensure_organizer, managed_competition, phase_status
from leaderboard.models import Competition, User
from leaderboard.platform import Conflict, Forbidden, InvalidInput, ServiceContext
from leaderboard.platform.db import utcnow

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
    owner: User | None = None,
    requires_approval: bool = False,
) -> Competition:
    """Create a competition owned by actor (an organizer), or by ``owner`` when the operator creates it.

    The operator without an owner makes a competition only the operator manages. The
    slug is lower-case letters, digits and inner dashes.
    """
    ensure_organizer(actor)
    owner = _checked_owner(actor, owner)
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
        created_by_id=None if owner is None else owner.id,
        requires_approval=requires_approval,
    )
    ctx.session.add(competition)
    try:
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict(f"A competition with the slug {slug!r} already exists.") from None
    managed = f"owned by {owner.display_name}" if owner is not None else "managed by the operator only"
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {slug}",
                 summary=f"created the competition “{title}”, {managed}")
    return competition


def set_owner(ctx: ServiceContext, *, slug: str, owner: User, actor: Actor) -> Competition:
    """Make an organizer account the owner (manager) of a competition; the operator only."""
    if not isinstance(actor, Operator):
        raise Forbidden("Only the instance operator (the command line) gives a competition its owner.")
    _checked_owner(actor, owner)
    competition = managed_competition(ctx, slug=slug, actor=actor)
    before = ctx.session.get(User, competition.created_by_id) if competition.created_by_id is not None else None
    competition.created_by_id = owner.id
    was = f"was {before.display_name}" if before is not None else "it had none"
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {slug}",
                 summary=f"made {owner.display_name} the owner ({was})")
    return competition


def ownerless_slugs(ctx: ServiceContext) -> list[str]:
    """Return the slugs of competitions without an owner (only the operator manages them), in slug order."""
    return list(ctx.session.scalars(
        select(Competition.slug).where(Competition.created_by_id.is_(None)).order_by(Competition.slug)))


def update_competition(
    ctx: ServiceContext, *, slug: str, actor: Actor, title: str | None = None, description: str | None = None,
    requires_approval: bool | None = None,
) -> Competition:
    """Change a competition's title, description or participation approval (Forbidden unless actor manages it)."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    before = {"title": competition.title, "description": competition.description,
              "requires_approval": competition.requires_approval}
    if title is not None:
        competition.title = _checked_title(title)
    if description is not None:
        competition.description = description.strip()
    if requires_approval is not None:
        competition.requires_approval = bool(requires_approval)
    changed = [name for name, value in before.items() if getattr(competition, name) != value]
    approval = (f"; participation approval is now {'on' if competition.requires_approval else 'off'}"
                if "requires_approval" in changed else "")
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {slug}",
                 summary=f"edited the competition ({', '.join(changed) or 'nothing'}){approval}")
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


def _checked_owner(actor: Actor, owner: User | None) -> User | None:
    """Return who owns a new competition: an organizer creating it, else the operator's named organizer or None."""
    if isinstance(actor, User):
        if owner is not None and owner.id != actor.id:
            raise Forbidden("An organizer creates competitions for themselves; the operator names other owners.")
        return actor
    if owner is not None and not owner.is_organizer:
        raise InvalidInput(f"{owner.email} is not an organizer account: only organizers own competitions "
                           "(create one with 'flask --app app users create EMAIL --password PW --organizer').")
    return owner


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
