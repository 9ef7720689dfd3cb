"""Final selection (docs/ENTRIES.md): at most K per team per phase, only while open, by the owner or a teammate."""

from __future__ import annotations

import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from leaderboard import submissions
from leaderboard.accounts import OPERATOR
from leaderboard.entries import selections, teams
from leaderboard.models import Submission, User
from leaderboard.organizing import phases
from leaderboard.platform import Conflict, Forbidden, NotFound


def upload(ctx, phase, user, data, *, method=None):
    """Upload data to phase as user."""
    return submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                         stream=io.BytesIO(data), method=method)


def selected(ctx, phase) -> set[int]:
    """Return the ids of the phase's selected submissions, read afresh."""
    ctx.session.expire_all()
    return set(ctx.session.scalars(select(Submission.id).where(Submission.phase_id == phase.id,
                                                               Submission.selected.is_(True))))


@pytest.fixture
def phase(make_phase):
    """Return an open phase with final_selections 1."""
    return make_phase(config={"task_type": "binary", "final_selections": 1})


def test_with_final_selections_1_one_selection_is_stored_and_a_second_refused(ctx, phase, make_user,
                                                                              make_predictions):
    alice = make_user()
    best, other = upload(ctx, phase, alice, make_predictions()), upload(ctx, phase, alice, make_predictions(wrong=3))
    selections.select_submission(ctx, submission_id=other.id, user=alice)
    assert selected(ctx, phase) == {other.id}
    with pytest.raises(Conflict, match=rf"allows 1 final selection; you have selected #{other.id}"):
        selections.select_submission(ctx, submission_id=best.id, user=alice)
    selections.unselect_submission(ctx, submission_id=other.id, user=alice)
    selections.select_submission(ctx, submission_id=best.id, user=alice)
    assert selected(ctx, phase) == {best.id}


def test_selecting_again_changes_nothing(ctx, phase, make_user, make_predictions):
    alice = make_user()
    sub = upload(ctx, phase, alice, make_predictions())
    selections.select_submission(ctx, submission_id=sub.id, user=alice)
    selections.select_submission(ctx, submission_id=sub.id, user=alice)
    assert selected(ctx, phase) == {sub.id}


def test_the_limit_is_per_team_and_teammates_may_select_each_others(ctx, phase, make_user, make_predictions):
    alice, bob, carol = make_user(), make_user(), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    teams.join_team(ctx, invite_code=team.invite_code, user=bob)
    alices, bobs = upload(ctx, phase, alice, make_predictions()), upload(ctx, phase, bob, make_predictions(wrong=1))
    selections.select_submission(ctx, submission_id=alices.id, user=bob)
    with pytest.raises(Conflict, match="your team has selected"):
        selections.select_submission(ctx, submission_id=bobs.id, user=alice)
    carols = upload(ctx, phase, carol, make_predictions())
    selections.select_submission(ctx, submission_id=carols.id, user=carol)  # another owner: its own limit
    assert selected(ctx, phase) == {alices.id, carols.id}


def test_only_the_owner_or_a_teammate_may_select(ctx, make_phase, make_competition, make_user, make_organizer,
                                                 make_predictions):
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer), config={"task_type": "binary", "final_selections": 1})
    alice, mallory = make_user(), make_user()
    sub = upload(ctx, phase, alice, make_predictions())
    with pytest.raises(NotFound):
        selections.select_submission(ctx, submission_id=sub.id, user=mallory)
    with pytest.raises(Forbidden):  # its organizer sees it, but selecting is the participant's choice
        selections.select_submission(ctx, submission_id=sub.id, user=organizer)
    assert selected(ctx, phase) == set()


def test_selections_change_only_while_the_phase_is_open(ctx, phase, make_user, make_predictions):
    alice = make_user()
    first, second = upload(ctx, phase, alice, make_predictions()), upload(ctx, phase, alice, make_predictions())
    selections.select_submission(ctx, submission_id=first.id, user=alice)
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    with pytest.raises(Conflict, match="only while the phase is open"):
        selections.unselect_submission(ctx, submission_id=first.id, user=alice)
    with pytest.raises(Conflict, match="only while the phase is open"):
        selections.select_submission(ctx, submission_id=second.id, user=alice)
    assert selected(ctx, phase) == {first.id}


def test_a_phase_without_final_selections_refuses_a_selection(ctx, make_phase, make_user, make_predictions):
    phase, alice = make_phase(), make_user()
    sub = upload(ctx, phase, alice, make_predictions())
    with pytest.raises(Conflict, match="no final selection"):
        selections.select_submission(ctx, submission_id=sub.id, user=alice)


def test_a_rejected_file_cannot_be_selected(ctx, phase, make_user):
    from leaderboard.platform import SubmissionInvalid

    alice = make_user()
    with pytest.raises(SubmissionInvalid) as caught:
        upload(ctx, phase, alice, b"id,prediction\nq1,maybe\n")
    with pytest.raises(Conflict, match="accepted"):
        selections.select_submission(ctx, submission_id=caught.value.submission_id, user=alice)


def test_every_change_tells_the_board(ctx, phase, make_user, make_predictions, monkeypatch):
    alice = make_user()
    sub = upload(ctx, phase, alice, make_predictions())
    calls: list[int] = []  # the runtime's hook, as the composition root wires it (board.changes.board_changed)
    monkeypatch.setattr(ctx.runtime, "board_changed",
                        lambda ctx, *, phase_id, submission_ids=None: calls.append(phase_id))
    selections.select_submission(ctx, submission_id=sub.id, user=alice)
    selections.unselect_submission(ctx, submission_id=sub.id, user=alice)
    assert calls == [phase.id, phase.id]


@pytest.mark.parametrize("attempt", range(2))
def test_concurrent_selections_of_one_team_never_pass_the_limit(runtime, ctx, make_phase, make_user,
                                                                make_predictions, attempt):
    phase = make_phase(config={"task_type": "binary", "final_selections": 2}, max_per_day="unlimited")
    alice, bob = make_user(), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    teams.join_team(ctx, invite_code=team.invite_code, user=bob)
    members = [alice, bob] * 3
    ids = [upload(ctx, phase, user, make_predictions(wrong=n)).id for n, user in enumerate(members)]
    barrier = threading.Barrier(len(ids))

    def pick(index: int) -> bool:
        with runtime.sessions() as session:
            user = session.get(User, members[index].id)
            barrier.wait()
            try:
                selections.select_submission(runtime.context(session), submission_id=ids[index], user=user)
            except Conflict:
                return False
            return True

    with ThreadPoolExecutor(max_workers=len(ids)) as pool:
        outcomes = list(pool.map(pick, range(len(ids))))
    assert sum(outcomes) == 2
    assert len(selected(ctx, phase)) == 2


def test_after_close_the_private_ranking_uses_the_selection_else_the_best_public(ctx, make_phase, make_user,
                                                                                make_predictions, labels_file):
    from leaderboard.board import ranking

    labels = labels_file(private=True)
    phase = make_phase(private=True, config={"task_type": "binary", "final_selections": 1})
    alice, bob = make_user(display_name="Alice"), make_user(display_name="Bob")
    public_best = upload(ctx, phase, alice, make_predictions(labels, wrong={"q5", "q6", "q7", "q8"}))
    private_best = upload(ctx, phase, alice, make_predictions(labels, wrong={"q1"}))
    selections.select_submission(ctx, submission_id=private_best.id, user=alice)
    bob_public_best = upload(ctx, phase, bob, make_predictions(labels, wrong={"q5"}))
    upload(ctx, phase, bob, make_predictions(labels, wrong={"q1", "q2"}))
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    board = ranking.leaderboard(ctx, phase_id=phase.id, viewer=None)
    ranked = {row.display_name: row.submission_id for row in board.rows if not row.is_baseline}
    assert board.split == "private"
    assert ranked == {"Alice": private_best.id, "Bob": bob_public_best.id}
    assert public_best.id not in ranked.values()
    assert "selected" in board.rule or "final selection" in board.rule
