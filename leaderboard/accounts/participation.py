"""Participation approval (per competition): ask to take part, decide, and who may submit.

With a competition's ``requires_approval`` on, an account takes part only once one of the
competition's managers approves it: it asks (``request_participation``), stays pending
and may read everything public, but its uploads are refused before anything is stored
or charged (``ensure_may_submit``), until a manager approves or refuses it (``decide``,
written to the audit log). Each account asks for itself, team members too: a team of
approved and pending accounts submits only through its approved members. The
competition's managers need no approval. Switching the setting is competitions.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, select
from sqlalchemy.exc import IntegrityError

from leaderboard.accounts import audit
from leaderboard.accounts.access import Actor, can_manage, get_competition, managed_competition
from leaderboard.models import Competition, Participation, Phase, Team, TeamMember, User
from leaderboard.platform import Conflict, Forbidden, InvalidInput, NotFound, ServiceContext
from leaderboard.platform.db import utcnow

PENDING, APPROVED, REFUSED = "pending", "approved", "refused"
STATUSES = (PENDING, APPROVED, REFUSED)


@dataclass(frozen=True)
class ParticipationState:
    """Where one account stands in one competition: is approval required, and what became of its request."""

    required: bool
    status: str | None  # None: not asked (or not needed); else pending, approved or refused
    manager: bool = False  # a manager of the competition needs no approval

    @property
    def may_submit(self) -> bool:
        """Return whether the account may submit as far as approval goes."""
        return not self.required or self.manager or self.status == APPROVED


@dataclass(frozen=True)
class Participant:
    """One request to take part, as the competition's managers read it."""

    user_id: int
    display_name: str
    email: str
    team: str | None
    status: str
    requested_at: datetime
    decided_at: datetime | None
    decided_by: str | None


def approval_rule(competition: Competition) -> str:
    """Return the competition's participation rule in a sentence."""
    if competition.requires_approval:
        return "Participants need the organizers' approval before they can submit; each account asks for itself."
    return "Every registered account can submit; no approval is needed."


def participation_state(ctx: ServiceContext, *, competition: Competition, user: User | None) -> ParticipationState:
    """Return where user stands in competition (an anonymous visitor: not asked)."""
    if user is None:
        return ParticipationState(required=competition.requires_approval, status=None)
    row = _row(ctx, competition_id=competition.id, user_id=user.id)
    return ParticipationState(required=competition.requires_approval, status=None if row is None else row.status,
                              manager=can_manage(competition, user))


def request_participation(ctx: ServiceContext, *, slug: str, user: User) -> ParticipationState:
    """Ask to take part in a competition that requires approval; asking again changes nothing."""
    competition = get_competition(ctx, slug)
    if not competition.requires_approval:
        raise Conflict("This competition needs no approval: you can submit to its open phases right away.")
    if _row(ctx, competition_id=competition.id, user_id=user.id) is None:
        ctx.session.add(Participation(competition_id=competition.id, user_id=user.id, status=PENDING,
                                      requested_at=utcnow()))
        try:
            ctx.session.commit()
        except IntegrityError:  # the same account asked twice at once: the first row stands
            ctx.session.rollback()
    return participation_state(ctx, competition=competition, user=user)


def ensure_may_submit(ctx: ServiceContext, *, phase: Phase, user: User) -> None:
    """Raise Forbidden unless user may submit to the phase's competition as far as approval goes."""
    state = participation_state(ctx, competition=phase.competition, user=user)
    if state.may_submit:
        return
    untouched = "Nothing was stored or charged."
    if state.status == PENDING:
        raise Forbidden("Your request to take part in this competition is pending approval by its organizers; "
                        f"you can submit once they approve it. {untouched}")
    if state.status == REFUSED:
        raise Forbidden(f"The organizers of this competition refused your request to take part. {untouched}")
    raise Forbidden("This competition admits participants on approval: ask to take part on its page (or POST "
                    f"/api/v1/competitions/{phase.competition.slug}/participation), then submit once the "
                    f"organizers approve you. {untouched}")


def list_participants(ctx: ServiceContext, *, slug: str, actor: Actor, status: str | None = None) -> list[Participant]:
    """Return a competition's requests to take part, pending first, oldest first (managers only)."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status is one of {', '.join(STATUSES)}.")
    query = (select(Participation, Team.name)
             .outerjoin(TeamMember, (TeamMember.competition_id == Participation.competition_id)
                        & (TeamMember.user_id == Participation.user_id))
             .outerjoin(Team, Team.id == TeamMember.team_id)
             .where(Participation.competition_id == competition.id)
             .order_by(case((Participation.status == PENDING, 0), else_=1), Participation.requested_at,
                       Participation.id))
    if status is not None:
        query = query.where(Participation.status == status)
    deciders = _names(ctx, competition.id)
    return [Participant(user_id=row.user_id, display_name=row.user.display_name, email=row.user.email, team=team,
                        status=row.status, requested_at=row.requested_at, decided_at=row.decided_at,
                        decided_by=_decider(row, deciders))
            for row, team in ctx.session.execute(query)]


def decide(ctx: ServiceContext, *, slug: str, user_id: int, approve: bool, actor: Actor) -> Participant:
    """Approve or refuse an account's request to take part (managers only); written to the audit log."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    row = _row(ctx, competition_id=competition.id, user_id=user_id)
    if row is None:
        raise NotFound(f"Account {user_id} has not asked to take part in this competition.")
    row.status = APPROVED if approve else REFUSED
    row.decided_at = utcnow()
    row.decided_by_id = actor.id if isinstance(actor, User) else None
    verb = "approved" if approve else "refused"
    audit.record(ctx, actor=actor, competition=competition,
                 target=f"participant {row.user.display_name} (account {user_id})",
                 summary=f"{verb} the request to take part")
    return next(p for p in list_participants(ctx, slug=slug, actor=actor) if p.user_id == user_id)


def _row(ctx: ServiceContext, *, competition_id: int, user_id: int) -> Participation | None:
    """Return an account's participation row in a competition, if it asked."""
    return ctx.session.scalar(select(Participation).where(Participation.competition_id == competition_id,
                                                          Participation.user_id == user_id))


def _decider(row: Participation, names: dict[int, str]) -> str | None:
    """Return who decided a request: an organizer's name, 'operator' for the command line, None while pending."""
    if row.decided_at is None:
        return None
    return names.get(row.decided_by_id, "operator") if row.decided_by_id is not None else "operator"


def _names(ctx: ServiceContext, competition_id: int) -> dict[int, str]:
    """Return the display names of the accounts that decided requests in a competition."""
    ids = select(Participation.decided_by_id).where(Participation.competition_id == competition_id)
    return {user_id: name for user_id, name in ctx.session.execute(
        select(User.id, User.display_name).where(User.id.in_(ids)))}
