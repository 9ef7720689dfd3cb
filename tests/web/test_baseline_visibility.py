"""Baselines follow their phase's visibility: nothing of one on an upcoming or hidden-leaderboard phase.

A built-in baseline's overall score is a function of the labels alone ("All yes"
accuracy is the share of true labels), so outsiders read it only where they could read
the leaderboard; the competition's managers always can.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from leaderboard.accounts import OPERATOR, get_submission
from leaderboard.board.ranking import leaderboard
from leaderboard.models import Baseline, Phase, User
from leaderboard.organizing import phases
from leaderboard.platform import Forbidden, NotFound, ServiceContext
from leaderboard.submissions import visible_scores

pytestmark = pytest.mark.backends("sqlite")

KINDS = ["upcoming", "hidden leaderboard"]


def all_yes(ctx: ServiceContext, phase: Phase) -> int:
    """Return the submission id of the phase's built-in "All yes" baseline."""
    return ctx.session.scalar(select(Baseline.submission_id).where(Baseline.phase_id == phase.id,
                                                                  Baseline.name == "All yes"))


@pytest.fixture
def owner(make_organizer: Callable[..., User]) -> User:
    """Return the organizer who owns the competition of every phase here."""
    return make_organizer()


@pytest.fixture
def phase_of(make_phase: Callable[..., Phase], make_competition: Callable[..., Any],
             owner: User) -> Callable[[str], Phase]:
    """Return phase_of(kind): a scored phase that is upcoming, has a hidden leaderboard, or is open and public."""

    def make(kind: str) -> Phase:
        competition = make_competition(created_by=owner)
        if kind == "upcoming":
            return make_phase(competition, status="upcoming")
        return make_phase(competition, leaderboard_visibility="hidden" if kind == "hidden leaderboard" else "public")

    return make


@pytest.fixture
def participant(make_user: Callable[..., User]) -> User:
    """Return a participant account."""
    return make_user()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("who", ["anonymous", "participant"])
def test_outsiders_cannot_read_a_baseline_where_the_leaderboard_is_not_theirs_to_read(
        ctx, phase_of, participant, kind, who):
    phase = phase_of(kind)
    viewer = participant if who == "participant" else None
    with pytest.raises(NotFound):
        get_submission(ctx, submission_id=all_yes(ctx, phase), viewer=viewer)
    if kind == "upcoming":  # the page exists, with nobody on it yet
        assert leaderboard(ctx, phase_id=phase.id, viewer=viewer).rows == []
    else:
        with pytest.raises(Forbidden):
            leaderboard(ctx, phase_id=phase.id, viewer=viewer)


@pytest.mark.parametrize("kind", KINDS)
def test_managers_always_read_their_baselines(ctx, phase_of, owner, make_organizer, kind):
    phase = phase_of(kind)
    with pytest.raises(NotFound):  # an organizer of another competition is an outsider here
        get_submission(ctx, submission_id=all_yes(ctx, phase), viewer=make_organizer())
    for manager in (owner, OPERATOR):
        submission = get_submission(ctx, submission_id=all_yes(ctx, phase), viewer=manager)
        assert visible_scores(ctx, submission=submission, viewer=manager)["overall"]["accuracy"] == 0.625
        assert any(row.is_baseline for row in leaderboard(ctx, phase_id=phase.id, viewer=manager).rows)


def test_anyone_reads_a_baseline_once_the_phase_opens_with_a_public_leaderboard(ctx, phase_of, participant):
    phase = phase_of("public")
    for viewer in (None, participant):
        assert get_submission(ctx, submission_id=all_yes(ctx, phase), viewer=viewer).is_baseline


def test_an_upcoming_phase_shows_its_baselines_once_opened(ctx, phase_of):
    phase = phase_of("upcoming")
    phases.open_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    assert get_submission(ctx, submission_id=all_yes(ctx, phase), viewer=None).is_baseline


@pytest.mark.parametrize("kind", KINDS)
def test_the_web_page_and_the_api_reveal_nothing_of_the_baseline(ctx, client, login, make_token, phase_of,
                                                                 participant, kind):
    phase = phase_of(kind)
    sub_id = all_yes(ctx, phase)
    token = make_token(participant)
    pages = [(f"/submissions/{sub_id}", {}), (f"/api/v1/submissions/{sub_id}", {}),
             (f"/phases/{phase.id}/leaderboard", {}), (f"/api/v1/phases/{phase.id}/leaderboard", {})]
    board = 200 if kind == "upcoming" else 403  # an upcoming board is shown empty, a hidden one refused
    anonymous = [client.get(path, headers=headers) for path, headers in pages]
    # Anonymous: the answer for anything not theirs to see (the login page, 401), never the score.
    assert [r.status_code for r in anonymous] == [302, 401, board, board]
    login(client, participant)
    as_participant = [client.get(path, headers={"Authorization": f"Bearer {token}"} if "/api/" in path else {})
                      for path, _ in pages]
    assert [r.status_code for r in as_participant] == [404, 404, board, board]
    for response in anonymous + as_participant:
        body = response.get_data(as_text=True)
        assert "All yes" not in body and "0.625" not in body and "62.5" not in body


def test_the_competition_page_shows_no_ranking_of_an_upcoming_phase(ctx, client, phase_of):
    phase = phase_of("upcoming")
    page = client.get(f"/c/{phase.competition.slug}?phase={phase.id}").get_data(as_text=True)
    assert "All yes" not in page and "Majority class" not in page
