"""The fair scoring queue (docs/RUNNING.md#the-scoring-queue): owners take turns, least recently served first."""

from __future__ import annotations

import io

from sqlalchemy import select

from leaderboard.models import Score, Submission
from leaderboard.organizing import phases
from leaderboard.platform.runtime import InlineDispatcher
from leaderboard.submissions import accept_submission, queue, recovery, scoring_runs


class Recorder:
    """A dispatcher that only records what it was asked to score."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def dispatch(self, submission_id: int) -> None:
        """Record the id."""
        self.ids.append(submission_id)


def upload(ctx, phase, user, content: bytes) -> int:
    """Accept an upload by user; return its id."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content)).id


def status(ctx, submission_id: int) -> str:
    """Return the submission's status, read fresh."""
    return ctx.session.scalar(select(Submission.status).where(Submission.id == submission_id))


def test_owners_take_turns_least_recently_served_first(ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, alice, bob, carol = make_phase(max_per_day=phases.UNLIMITED), make_user(), make_user(), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    first = upload(ctx, phase, alice, make_predictions())
    assert scoring_runs.score_next(ctx) == first  # alice has now been served
    flood = [upload(ctx, phase, alice, make_predictions()) for _ in range(5)]
    bobs = [upload(ctx, phase, bob, make_predictions()) for _ in range(2)]
    carols = [upload(ctx, phase, carol, make_predictions())]
    order = queue.fair_order(ctx)
    assert order == [bobs[0], carols[0], flood[0], bobs[1], flood[1], *flood[2:]]
    assert queue.queue_positions(ctx, [carols[0], flood[4]]) == {carols[0]: 2, flood[4]: 8}


def test_a_flood_of_40_never_holds_back_another_owners_single_upload_in_embedded_mode(
        ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, flooder, other = make_phase(max_per_day=phases.UNLIMITED), make_user(), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    flood = [upload(ctx, phase, flooder, make_predictions()) for _ in range(40)]
    assert scoring_runs.score_next(ctx) == flood[0]  # the flood's first is being scored when the other arrives
    # Embedded mode: the upload's own request scores in turn until its submission is taken.
    monkeypatch.setattr(ctx.runtime, "score", scoring_runs.score_in_turn)
    monkeypatch.setattr(ctx.runtime, "dispatcher", InlineDispatcher(ctx.runtime))
    single = upload(ctx, phase, other, make_predictions())
    assert status(ctx, single) == "scored"
    waiting = [status(ctx, i) for i in flood[1:]]
    assert waiting == ["queued"] * 39  # no run of the flood went before it


def test_a_woken_scorer_takes_the_fairest_not_the_one_it_was_woken_for(ctx, make_phase, make_user, make_predictions,
                                                                         monkeypatch):
    phase, flooder, other = make_phase(max_per_day=phases.UNLIMITED), make_user(), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    flood = [upload(ctx, phase, flooder, make_predictions()) for _ in range(3)]
    scoring_runs.score_next(ctx)
    single = upload(ctx, phase, other, make_predictions())
    scoring_runs.wake_scorer(ctx, submission_id=flood[1])  # a Celery task sent for the flood's second upload
    mine = {*flood, single}
    order = [i for i in ctx.session.scalars(select(Score.submission_id).order_by(Score.id)) if i in mine]
    assert order == [flood[0], single, flood[1], flood[2]]  # the other owner's first, then the rest: drained


def test_a_woken_scorer_drains_the_queue_so_a_lost_wake_up_strands_nothing(ctx, make_phase, make_user,
                                                                           make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=phases.UNLIMITED), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())  # every wake-up is lost but the last
    ids = [upload(ctx, phase, user, make_predictions()) for _ in range(4)]
    scoring_runs.wake_scorer(ctx, submission_id=ids[-1])
    assert [status(ctx, i) for i in ids] == ["scored"] * 4


def test_ordinal_places():
    assert [queue.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert queue.Place(position=3, eta_seconds=20).sentence() == "3rd in line, about 20 s"


def test_after_a_restart_the_sweep_serves_a_single_upload_second_not_after_a_flood(ctx, make_phase, make_user,
                                                                                     make_predictions, monkeypatch):
    phase, flooder, other = make_phase(max_per_day=phases.UNLIMITED), make_user(), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())  # a crash: nothing dispatched was scored
    flood = [upload(ctx, phase, flooder, make_predictions()) for _ in range(40)]
    single = upload(ctx, phase, other, make_predictions())
    monkeypatch.setattr(ctx.runtime, "score", scoring_runs.score_in_turn)
    monkeypatch.setattr(ctx.runtime, "dispatcher", InlineDispatcher(ctx.runtime))
    recovery.requeue_unfinished(ctx)  # wakes a scorer per queued row, oldest first
    ctx.session.expire_all()
    served = list(ctx.session.scalars(select(Submission.id).where(Submission.id.in_([*flood, single]))
                                      .order_by(Submission.served_at, Submission.id)))
    assert len(served) == 41 and {status(ctx, i) for i in served} == {"scored"}
    assert served.index(single) <= 1  # at most one run of the flood (the one already woken) went first
