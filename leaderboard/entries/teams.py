"""Teams (docs/ENTRIES.md): per competition, joined with an invite code; members share the quota and the entries.

One team per user per competition (a unique row in team_members). Joining (or creating,
which joins) after having submitted to the competition is refused: those uploads were
charged to the user and rank as the user's entries. Leaving is allowed until the team's
first submission to the competition; after that the team's entries and quota are shared
and a member's leaving would split them. A team nobody is left in is deleted.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError

from leaderboard.accounts import can_manage, get_competition, team_of
from leaderboard.entries.rules import ACKNOWLEDGED
from leaderboard.models import Competition, Phase, Submission, Team, TeamMember, User
from leaderboard.platform import Conflict, InvalidInput, NotFound, ServiceContext

MAX_NAME_LENGTH = 80
MIN_NAME_LENGTH = 2
INVITE_LENGTH = 16  # letters and digits (95 bits): guessing one is hopeless
INVITE_ALPHABET = string.ascii_letters + string.digits  # no "-": a code must never read as a command-line option


@dataclass(frozen=True)
class TeamMemberView:
    """A member as a team page shows them: public display name and when they joined."""

    display_name: str
    joined_at: datetime
    is_viewer: bool


@dataclass(frozen=True)
class TeamEntry:
    """One of the team's entries in one phase: its method and how many accepted uploads it has."""

    phase_id: int
    phase_name: str
    method: str
    submissions: int
    selected: int
    last_submission_id: int
    last_submitted_at: datetime


@dataclass(frozen=True)
class TeamPage:
    """What a viewer may see of a team: members always; the invite code and entries for members and managers."""

    team: Team
    competition: Competition
    members: list[TeamMemberView]
    is_member: bool
    invite_code: str | None
    entries: list[TeamEntry] | None
    can_leave: bool


def create_team(ctx: ServiceContext, *, competition_slug: str, name: str, user: User) -> Team:
    """Create a team in a competition with the user as its first member; Conflict if they cannot join one."""
    competition = get_competition(ctx, competition_slug)
    name = _checked_name(name)
    _ensure_may_join(ctx, competition=competition, user=user)
    if ctx.session.scalar(select(Team.id).where(Team.competition_id == competition.id, Team.name == name)):
        raise Conflict(f"This competition already has a team named {name!r}.")
    team = Team(competition_id=competition.id, name=name, invite_code=_new_invite_code(),
                created_by_id=user.id)
    team.members.append(TeamMember(user_id=user.id, competition_id=competition.id))
    ctx.session.add(team)
    _commit(ctx, f"This competition already has a team named {name!r}, or you joined another team meanwhile.")
    return team


def _new_invite_code() -> str:
    """Return a fresh random invite code."""
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_LENGTH))


def join_team(ctx: ServiceContext, *, invite_code: str, user: User) -> Team:
    """Join the team with this invite code (already a member: nothing changes); Conflict if the user cannot."""
    team = ctx.session.scalar(select(Team).where(Team.invite_code == (invite_code or "").strip()))
    if team is None:
        raise NotFound("No team has this invite code; check it with the team member who sent it.")
    competition = ctx.session.get(Competition, team.competition_id)
    assert competition is not None  # a team's competition cascades it away
    current = team_of(ctx, competition_id=team.competition_id, user_id=user.id)
    if current is not None and current.id == team.id:
        return team
    _ensure_may_join(ctx, competition=competition, user=user)
    ctx.session.add(TeamMember(team_id=team.id, user_id=user.id, competition_id=competition.id))
    _commit(ctx, "You joined another team of this competition meanwhile.")
    ctx.session.refresh(team)
    return team


def leave_team(ctx: ServiceContext, *, team_id: int, user: User) -> None:
    """Leave a team before its first submission (Conflict after it); the last member's leaving deletes it."""
    membership = ctx.session.scalar(select(TeamMember).where(TeamMember.team_id == team_id,
                                                             TeamMember.user_id == user.id))
    if membership is None:
        raise NotFound("You are not a member of this team.")
    if _team_submissions(ctx, team_id=team_id):
        raise Conflict("Your team has already submitted to this competition: its members share those entries and "
                       "their quota, so nobody can leave it any more.")
    team = membership.team
    team.members.remove(membership)  # delete-orphan: the membership row goes
    if not team.members:
        ctx.session.delete(team)
    ctx.session.commit()


def team_page(ctx: ServiceContext, *, team_id: int, viewer: User | None) -> TeamPage:
    """Return a team as viewer may see it (NotFound for anonymous visitors)."""
    team = ctx.session.get(Team, team_id)
    if team is None or viewer is None:
        raise NotFound(f"No team {team_id}.")
    competition = ctx.session.get(Competition, team.competition_id)
    assert competition is not None
    is_member = any(m.user_id == viewer.id for m in team.members)
    insider = is_member or can_manage(competition, viewer)
    members = [TeamMemberView(m.user.display_name, m.joined_at, m.user_id == viewer.id) for m in team.members]
    return TeamPage(team=team, competition=competition, members=members, is_member=is_member,
                    invite_code=team.invite_code if insider else None,
                    entries=_entries(ctx, team_id=team.id) if insider else None,
                    can_leave=is_member and not _team_submissions(ctx, team_id=team.id))


def _entries(ctx: ServiceContext, *, team_id: int) -> list[TeamEntry]:
    """Return the team's entries, per phase and method, from its accepted uploads."""
    rows = ctx.session.execute(
        select(Phase.id, Phase.name, Submission.method, func.count(Submission.id),
               func.sum(case((Submission.selected.is_(True), 1), else_=0)), func.max(Submission.id),
               func.max(Submission.created_at))
        .join(Phase, Phase.id == Submission.phase_id)
        .where(Submission.team_id == team_id, Submission.status.in_(ACKNOWLEDGED), Submission.is_baseline.is_(False))
        .group_by(Phase.id, Phase.name, Phase.position, Submission.method)
        .order_by(Phase.position, Submission.method)
    ).all()
    return [TeamEntry(row[0], row[1], row[2], int(row[3]), int(row[4] or 0), int(row[5]), row[6]) for row in rows]


def _team_submissions(ctx: ServiceContext, *, team_id: int) -> int:
    """Return how many accepted uploads the team has made (in any phase of its competition)."""
    return int(ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.team_id == team_id, Submission.status.in_(ACKNOWLEDGED))) or 0)


def may_join(ctx: ServiceContext, *, competition_id: int, user: User) -> bool:
    """Return whether the user may still create or join a team in the competition (no team, no submission yet)."""
    return team_of(ctx, competition_id=competition_id, user_id=user.id) is None and not _submitted_alone(
        ctx, competition_id=competition_id, user_id=user.id)


def _submitted_alone(ctx: ServiceContext, *, competition_id: int, user_id: int) -> bool:
    """Return whether the user has an accepted upload of their own in the competition."""
    return bool(ctx.session.scalar(
        select(func.count()).select_from(Submission).join(Phase, Phase.id == Submission.phase_id)
        .where(Phase.competition_id == competition_id, Submission.user_id == user_id,
               Submission.is_baseline.is_(False), Submission.status.in_(ACKNOWLEDGED))))


def _ensure_may_join(ctx: ServiceContext, *, competition: Competition, user: User) -> None:
    """Raise Conflict when the user is in a team of the competition already, or has submitted to it."""
    current = team_of(ctx, competition_id=competition.id, user_id=user.id)
    if current is not None:
        raise Conflict(f"You are already in the team {current.name!r} in this competition; one team per competition.")
    if _submitted_alone(ctx, competition_id=competition.id, user_id=user.id):
        raise Conflict("You have already submitted to this competition on your own, so you cannot join a team in "
                       "it: those submissions and their quota stay yours.")


def _checked_name(name: str) -> str:
    """Return a team name with its spaces collapsed, or raise InvalidInput."""
    name = " ".join((name or "").split())
    if not MIN_NAME_LENGTH <= len(name) <= MAX_NAME_LENGTH:
        raise InvalidInput(f"A team name has {MIN_NAME_LENGTH} to {MAX_NAME_LENGTH} characters.",
                           [{"field": "name", "message": f"{MIN_NAME_LENGTH} to {MAX_NAME_LENGTH} characters"}])
    return name


def _commit(ctx: ServiceContext, message: str) -> None:
    """Commit, turning a unique-constraint race (same name, a second team) into Conflict."""
    try:
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict(message) from None
