"""Scoring leases (docs/RUNNING.md#leases): a run renews its lease; a lapsed one is taken back and scored at once."""

from __future__ import annotations

import dataclasses
import io
import threading
from datetime import timedelta

from sqlalchemy import func, select, update

from leaderboard.models import Score, Submission
from leaderboard.platform.db import utcnow
from leaderboard.platform.runtime import InlineDispatcher
from leaderboard.submissions import accept_submission, recovery, scoring_runs


class Recorder:
    """A dispatcher that only records what it was asked to score."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def dispatch(self, submission_id: int) -> None:
        """Record the id."""
        self.ids.append(submission_id)


def queued(ctx, phase, user, content: bytes, monkeypatch) -> Submission:
    """Accept an upload whose dispatch is only recorded, so it stays queued."""
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def killed_mid_run(ctx, submission_id: int, *, lease_left: timedelta) -> None:
    """Leave the row as a scorer killed while scoring leaves it: 'scoring', with its lease ending after lease_left."""
    now = utcnow()
    ctx.session.execute(update(Submission).where(Submission.id == submission_id).values(
        status="scoring", scoring_started_at=now - timedelta(seconds=5), served_at=now - timedelta(seconds=5),
        lease_until=now + lease_left))
    ctx.session.commit()


def fresh(ctx, submission_id: int) -> Submission:
    """Return the submission as the database holds it now."""
    ctx.session.expire_all()
    return ctx.session.get(Submission, submission_id)


def test_a_lapsed_lease_is_taken_back_long_before_stale_seconds_and_scored_once(ctx, make_phase, make_user,
                                                                                 make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()
    submission = queued(ctx, phase, user, make_predictions(), monkeypatch)
    killed_mid_run(ctx, submission.id, lease_left=timedelta(seconds=-1))
    assert ctx.settings.stale_seconds >= 900  # only the lease can bring it back this soon
    recorder = Recorder()
    monkeypatch.setattr(ctx.runtime, "dispatcher", recorder)
    assert recovery.sweep(ctx) == [submission.id]  # taken back and woken in one sweep: due at once
    row = fresh(ctx, submission.id)
    assert (row.status, row.attempts, row.next_attempt_at, row.lease_until) == ("queued", 1, None, None)
    monkeypatch.setattr(ctx.runtime, "dispatcher", InlineDispatcher(ctx.runtime))
    ctx.dispatch(recorder.ids)
    assert fresh(ctx, submission.id).status == "scored"
    assert ctx.session.scalar(select(func.count()).select_from(Score).where(Score.submission_id == submission.id)) == 1


def test_a_held_lease_is_left_alone_by_the_sweep(ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()
    submission = queued(ctx, phase, user, make_predictions(), monkeypatch)
    killed_mid_run(ctx, submission.id, lease_left=timedelta(seconds=30))
    assert recovery.sweep(ctx) == []
    assert (fresh(ctx, submission.id).status, fresh(ctx, submission.id).attempts) == ("scoring", 0)


def test_a_second_lapse_backs_off_like_any_failure(ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()
    submission = queued(ctx, phase, user, make_predictions(), monkeypatch)
    ctx.session.execute(update(Submission).where(Submission.id == submission.id).values(attempts=1))
    killed_mid_run(ctx, submission.id, lease_left=timedelta(seconds=-1))
    assert recovery.sweep(ctx) == []  # a file that kills its scorer twice waits retry_seconds
    row = fresh(ctx, submission.id)
    assert row.status == "queued" and row.attempts == 2 and row.next_attempt_at > utcnow()


def test_a_scoring_run_renews_its_lease_while_it_works(ctx, runtime, make_phase, make_user, make_predictions,
                                                       monkeypatch):
    monkeypatch.setattr(runtime, "settings", dataclasses.replace(runtime.settings, lease_seconds=1.0))
    phase, user = make_phase(), make_user()
    submission = queued(ctx, phase, user, make_predictions(), monkeypatch)
    renewed = threading.Event()
    evaluate = scoring_runs.evaluation

    def slow_evaluate(labels, predictions):
        first = None
        for _ in range(600):  # until a renewal moved the lease (about every 0.25 s), at most a minute
            with runtime.sessions() as session:
                lease = session.scalar(select(Submission.lease_until).where(Submission.id == submission.id))
            first = first or lease
            if lease is not None and lease > first:
                renewed.set()
                break
            threading.Event().wait(0.1)
        return evaluate(labels, predictions)

    monkeypatch.setattr(scoring_runs, "evaluation", slow_evaluate)
    scoring_runs.score_submission(ctx, submission_id=submission.id)
    assert renewed.is_set()
    assert fresh(ctx, submission.id).status == "scored"


def test_a_lost_wake_up_is_made_good_after_three_leases_not_stale_seconds(ctx, make_phase, make_user,
                                                                            make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()
    submission = queued(ctx, phase, user, make_predictions(), monkeypatch)  # its wake-up died with its process
    recorder = Recorder()
    monkeypatch.setattr(ctx.runtime, "dispatcher", recorder)
    assert recovery.sweep(ctx) == []  # just acknowledged: its own wake-up may still come
    later = utcnow() + timedelta(seconds=recovery.WAKE_AFTER_LEASES * ctx.settings.lease_seconds + 1)
    assert later < utcnow() + timedelta(seconds=ctx.settings.stale_seconds)
    assert recovery.sweep(ctx, now=later) == [submission.id]
    assert recovery.sweep(ctx, now=later) == []  # once per three leases


def test_a_draining_scorer_takes_back_a_lapsed_run_without_the_sweep(ctx, make_phase, make_user, make_predictions,
                                                                     monkeypatch):
    phase, ann, bob = make_phase(), make_user(), make_user()
    lost = queued(ctx, phase, ann, make_predictions(), monkeypatch)
    waiting = queued(ctx, phase, bob, make_predictions(wrong=1), monkeypatch)
    killed_mid_run(ctx, lost.id, lease_left=timedelta(seconds=-1))  # its worker died; beat's sweep is stuck behind
    scoring_runs.wake_scorer(ctx, submission_id=waiting.id)
    assert (fresh(ctx, lost.id).status, fresh(ctx, waiting.id).status) == ("scored", "scored")


def test_without_the_take_back_a_draining_scorer_leaves_a_lapsed_run_to_the_sweep(ctx, make_phase, make_user,
                                                                                  make_predictions, monkeypatch):
    phase, ann, bob = make_phase(), make_user(), make_user()
    lost = queued(ctx, phase, ann, make_predictions(), monkeypatch)
    waiting = queued(ctx, phase, bob, make_predictions(wrong=1), monkeypatch)
    killed_mid_run(ctx, lost.id, lease_left=timedelta(seconds=-1))
    monkeypatch.setattr(recovery, "take_back_lapsed", lambda ctx: None)  # the defence off: the twin of the above
    scoring_runs.wake_scorer(ctx, submission_id=waiting.id)
    assert (fresh(ctx, lost.id).status, fresh(ctx, waiting.id).status) == ("scoring", "scored")
