"""Lookups and permission checks: find a competition, phase or submission, and decide who may do what.

Every service that needs one of these imports it from here, so this module imports no
other service. One rule for the web pages, the API and the CLI: an organizer manages the
competitions they own (``created_by_id``: the creator, or the owner the operator named
with ``competitions create --owner`` / ``set-owner``). A competition without an owner is
managed by the operator alone, never by every organizer of the instance (who could
otherwise export its hidden labels and every participant's file). Participants manage
nothing. The operator shell (CLI commands, the demo installer) acts as ``OPERATOR`` and
may manage everything; web and API callers always pass the real user, so a missing user
(None, an anonymous caller) is refused, never mistaken for the operator.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from leaderboard.models import Competition, Phase, Submission, Team, TeamMember, User
from leaderboard.platform import Forbidden, NotFound, ServiceContext
from leaderboard.platform.db import utcnow


class Operator:
    """The trusted operator shell: someone with access to the server's CLI."""

    def __repr__(self) -> str:
        return "OPERATOR"


OPERATOR = Operator()
Actor = User | Operator


def is_organizer(actor: Actor | None) -> bool:
    """Return whether actor may organize at all: the operator, or an organizer account."""
    return isinstance(actor, Operator) or (isinstance(actor, User) and actor.is_organizer)


def can_manage(competition: Competition, actor: Actor | None) -> bool:
    """Return whether actor manages this competition: its owning organizer, or the operator (every one)."""
    if isinstance(actor, Operator):
        return True
    if not isinstance(actor, User) or not actor.is_organizer:
        return False
    return competition.created_by_id is not None and competition.created_by_id == actor.id


def ensure_organizer(actor: Actor | None) -> None:
    """Raise Forbidden unless actor is an organizer or the operator."""
    if not is_organizer(actor):
        raise Forbidden("Only organizers may do this.")


def ensure_can_manage(*, competition: Competition, actor: Actor | None) -> None:
    """Raise Forbidden unless actor manages this competition (see can_manage)."""
    ensure_organizer(actor)
    if not can_manage(competition, actor):
        if competition.created_by_id is None:
            raise Forbidden("This competition has no owner: only the instance operator manages it (from the "
                            "command line, which can give it an owner with 'competitions set-owner').")
        raise Forbidden("Another organizer manages this competition.")


def phase_status(phase: Phase, now: datetime | None = None) -> str:
    """Return 'upcoming', 'open' or 'closed': an organizer's override wins, else the clock decides."""
    return status_at(phase.start_at, phase.end_at, phase.state_override, now)


def status_at(start_at: datetime | None, end_at: datetime | None, override: str | None,
              now: datetime | None = None) -> str:
    """Return phase_status from a phase's dates and override (for callers holding a row, not a Phase)."""
    if override in ("open", "closed"):
        return override
    now = now or utcnow()
    if start_at is None or now < start_at:
        return "upcoming"
    if end_at is not None and now >= end_at:
        return "closed"
    return "open"


def leaderboard_readable(phase: Phase, viewer: Actor | None) -> bool:
    """Return whether viewer may read the phase's leaderboard and its baselines.

    Its managers always; anyone else once the phase is no longer upcoming and only while
    the leaderboard is public (a baseline's score alone tells the label prevalence).
    """
    if can_manage(phase.competition, viewer):
        return True
    return phase_status(phase) != "upcoming" and phase.leaderboard_visibility == "public"


def get_competition(ctx: ServiceContext, slug: str) -> Competition:
    """Return the competition with this slug (its phases loaded), else raise NotFound."""
    competition = ctx.session.scalar(
        select(Competition).options(selectinload(Competition.phases)).where(Competition.slug == slug)
    )
    if competition is None:
        raise NotFound(f"No competition {slug!r}.")
    return competition


def get_phase(ctx: ServiceContext, phase_id: int) -> Phase:
    """Return the phase with this id, else raise NotFound."""
    phase = ctx.session.get(Phase, phase_id)
    if phase is None:
        raise NotFound(f"No phase {phase_id}.")
    return phase


def team_of(ctx: ServiceContext, *, competition_id: int, user_id: int) -> Team | None:
    """Return the user's team in a competition (at most one, docs/ENTRIES.md), or None."""
    return ctx.session.scalar(select(Team).join(TeamMember, TeamMember.team_id == Team.id).where(
        TeamMember.competition_id == competition_id, TeamMember.user_id == user_id))


def managed_competition(ctx: ServiceContext, *, slug: str, actor: Actor) -> Competition:
    """Return the competition with this slug if actor manages it (NotFound, Forbidden)."""
    competition = ctx.session.scalar(select(Competition).where(Competition.slug == slug))
    if competition is None:
        raise NotFound(f"No competition {slug!r}.")
    ensure_can_manage(competition=competition, actor=actor)
    return competition


def managed_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> Phase:
    """Return the phase with this id if actor manages its competition (NotFound, Forbidden)."""
    phase = get_phase(ctx, phase_id)
    ensure_can_manage(competition=phase.competition, actor=actor)
    return phase


def manages_submission(submission: Submission, viewer: User | None) -> bool:
    """Return whether viewer manages the submission's competition (None is an anonymous visitor here)."""
    return viewer is not None and can_manage(submission.phase.competition, viewer)


def get_submission(ctx: ServiceContext, *, submission_id: int, viewer: User | None) -> Submission:
    """Return a submission its owner or its competition's managers may see, else NotFound.

    A baseline is seen by whoever may read its phase's leaderboard (leaderboard_readable).
    """
    submission = ctx.session.get(Submission, submission_id)
    if submission is None or not _may_see(submission, viewer):
        raise NotFound(f"No submission {submission_id}.")
    return submission


def _may_see(submission: Submission, viewer: User | None) -> bool:
    """Return whether viewer may see this submission's page (a baseline: whoever may read its leaderboard)."""
    if submission.is_baseline:
        return leaderboard_readable(submission.phase, viewer)
    if viewer is None:
        return False
    return viewer.id == submission.user_id or in_team(submission, viewer) or manages_submission(submission, viewer)


def in_team(submission: Submission, viewer: User | None) -> bool:
    """Return whether viewer belongs to the team the submission was made for (teammates share their entries)."""
    team = submission.team
    return viewer is not None and team is not None and any(m.user_id == viewer.id for m in team.members)
