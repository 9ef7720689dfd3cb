"""Participation approval: with it on, only approved accounts submit; each account asks; decisions are audited."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from leaderboard import submissions
from leaderboard.accounts import OPERATOR, audit, participation
from leaderboard.entries import quota, teams
from leaderboard.models import Competition, Participation, QuotaUsage, Submission, User
from leaderboard.organizing import competitions
from leaderboard.platform import Conflict, Forbidden, NotFound, ServiceContext


@pytest.fixture
def owner(make_organizer: Callable[..., User]) -> User:
    """Return the organizer who owns the competition."""
    return make_organizer("owner@example.org")


@pytest.fixture
def gated(ctx: ServiceContext, owner: User, make_competition: Callable[..., Competition],
          make_phase: Callable[..., Any]) -> Any:
    """Return an open phase of a competition that requires approval."""
    competition = make_competition("gated", created_by=owner)
    competitions.update_competition(ctx, slug="gated", actor=owner, requires_approval=True)
    return make_phase(competition)


def upload(ctx: ServiceContext, phase: Any, user: User, data: bytes) -> Submission:
    """Upload data as user."""
    return submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=data)


def stored(ctx: ServiceContext) -> tuple[int, int]:
    """Return how many non-baseline submissions exist and how many units their owners were charged in total."""
    count = ctx.session.scalar(select(func.count()).select_from(Submission).where(Submission.is_baseline.is_(False)))
    used = ctx.session.scalar(select(func.coalesce(func.sum(QuotaUsage.used), 0)).where(QuotaUsage.day == "total"))
    return count, used


def test_a_pending_participant_cannot_submit_and_nothing_is_stored_or_charged(
        ctx: ServiceContext, gated: Any, make_user: Callable[..., User],
        make_predictions: Callable[..., bytes]) -> None:
    ada = make_user("ada@example.org")
    with pytest.raises(Forbidden, match="ask to take part"):
        upload(ctx, gated, ada, make_predictions())
    state = participation.request_participation(ctx, slug="gated", user=ada)
    assert (state.status, state.may_submit) == ("pending", False)
    with pytest.raises(Forbidden, match="pending approval") as refused:
        upload(ctx, gated, ada, make_predictions())
    assert "Nothing was stored or charged" in refused.value.message
    assert stored(ctx) == (0, 0)
    assert quota.quota_status(ctx, phase=gated, user=ada).used_today == 0


def test_an_approved_participant_submits_and_a_refused_one_cannot(
        ctx: ServiceContext, gated: Any, owner: User, make_user: Callable[..., User],
        make_predictions: Callable[..., bytes]) -> None:
    ada, bob = make_user("ada@example.org"), make_user("bob@example.org")
    for user in (ada, bob):
        participation.request_participation(ctx, slug="gated", user=user)
    approved = participation.decide(ctx, slug="gated", user_id=ada.id, approve=True, actor=owner)
    refused = participation.decide(ctx, slug="gated", user_id=bob.id, approve=False, actor=owner)
    assert (approved.status, approved.decided_by, refused.status) == ("approved", owner.display_name, "refused")
    assert upload(ctx, gated, ada, make_predictions()).status == "scored"
    with pytest.raises(Forbidden, match="refused your request"):
        upload(ctx, gated, bob, make_predictions())
    assert stored(ctx) == (1, 1)


def test_every_decision_is_in_the_audit_log(ctx: ServiceContext, gated: Any, owner: User,
                                            make_user: Callable[..., User]) -> None:
    ada = make_user("ada@example.org", display_name="Ada L")
    participation.request_participation(ctx, slug="gated", user=ada)
    participation.decide(ctx, slug="gated", user_id=ada.id, approve=False, actor=owner)
    participation.decide(ctx, slug="gated", user_id=ada.id, approve=True, actor=OPERATOR)
    rows = audit.audit_log(ctx, slug="gated", actor=owner)
    decisions = [(row.actor, row.summary) for row in rows if row.target == f"participant Ada L (account {ada.id})"]
    assert decisions[0][1] == "approved the request to take part" and decisions[0][0].startswith("operator")
    assert decisions[1] == (owner.display_name, "refused the request to take part")
    assert any("participation approval is now on" in row.summary for row in rows)


def test_each_team_member_needs_their_own_approval(ctx: ServiceContext, gated: Any, owner: User,
                                                   make_user: Callable[..., User],
                                                   make_predictions: Callable[..., bytes]) -> None:
    ada, bob = make_user("ada@example.org"), make_user("bob@example.org")
    team = teams.create_team(ctx, competition_slug="gated", name="Pair", user=ada)
    teams.join_team(ctx, invite_code=team.invite_code, user=bob)
    for user in (ada, bob):
        participation.request_participation(ctx, slug="gated", user=user)
    participation.decide(ctx, slug="gated", user_id=ada.id, approve=True, actor=owner)
    assert upload(ctx, gated, ada, make_predictions()).team_id == team.id
    with pytest.raises(Forbidden, match="pending approval"):
        upload(ctx, gated, bob, make_predictions())
    listed = participation.list_participants(ctx, slug="gated", actor=owner)
    assert [(p.email, p.team, p.status) for p in listed] == [("bob@example.org", "Pair", "pending"),
                                                           ("ada@example.org", "Pair", "approved")]


def test_asking_twice_keeps_one_request_and_needs_approval_to_be_on(
        ctx: ServiceContext, gated: Any, make_user: Callable[..., User], make_competition: Callable[..., Any]) -> None:
    ada = make_user()
    participation.request_participation(ctx, slug="gated", user=ada)
    participation.request_participation(ctx, slug="gated", user=ada)
    assert ctx.session.scalar(select(func.count()).select_from(Participation)) == 1
    make_competition("open-door")
    with pytest.raises(Conflict, match="needs no approval"):
        participation.request_participation(ctx, slug="open-door", user=ada)


def test_without_approval_anyone_registered_submits(ctx: ServiceContext, make_phase: Callable[..., Any],
                                                    make_user: Callable[..., User],
                                                    make_predictions: Callable[..., bytes]) -> None:
    assert upload(ctx, make_phase(), make_user(), make_predictions()).status == "scored"


def test_managers_need_no_approval_and_other_organizers_cannot_decide(
        ctx: ServiceContext, gated: Any, owner: User, make_organizer: Callable[..., User],
        make_user: Callable[..., User], make_predictions: Callable[..., bytes]) -> None:
    assert participation.participation_state(ctx, competition=gated.competition, user=owner).may_submit
    ada, stranger = make_user(), make_organizer("stranger@example.org")
    participation.request_participation(ctx, slug="gated", user=ada)
    with pytest.raises(Forbidden):
        participation.decide(ctx, slug="gated", user_id=ada.id, approve=True, actor=stranger)
    with pytest.raises(Forbidden):
        participation.list_participants(ctx, slug="gated", actor=stranger)
    with pytest.raises(Forbidden):
        upload(ctx, gated, stranger, make_predictions())  # an organizer of another competition asks like anyone
    with pytest.raises(NotFound):
        participation.decide(ctx, slug="gated", user_id=stranger.id, approve=True, actor=owner)


def test_switching_approval_off_lets_pending_accounts_submit(ctx: ServiceContext, gated: Any, owner: User,
                                                              make_user: Callable[..., User],
                                                              make_predictions: Callable[..., bytes]) -> None:
    ada = make_user()
    participation.request_participation(ctx, slug="gated", user=ada)
    competitions.update_competition(ctx, slug="gated", actor=owner, requires_approval=False)
    assert upload(ctx, gated, ada, make_predictions()).status == "scored"
