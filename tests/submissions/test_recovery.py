"""Recovery (docs/RULES.md): every acknowledged submission ends scored, and nothing is charged without a 202."""

from __future__ import annotations

import io
import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from leaderboard.entries import quota
from leaderboard.models import QuotaUsage, Score, Submission
from leaderboard.platform import sessions
from leaderboard.platform.db import utcnow
from leaderboard.platform.runtime import InlineDispatcher
from leaderboard.submissions import accept_submission, claims, recovery, scoring_runs, store_file


def upload(ctx, phase, user, content: bytes, **kwargs):
    """Accept content as an upload by user."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content),
                             **kwargs)


def fresh(ctx, submission_id: int) -> Submission:
    """Return the submission as the database holds it now."""
    ctx.session.expire_all()
    return ctx.session.get(Submission, submission_id)


def charged(ctx, phase, user) -> int:
    """Return the user's total quota units used in phase, read fresh."""
    ctx.session.expire_all()
    return quota.quota_status(ctx, phase=phase, user=user).used_total


def received_row(ctx, phase, user, content: bytes, *, key: str | None = None) -> Submission:
    """Store a file and commit its row as 'received', as a request that died before its 202 leaves it."""
    stored = store_file(ctx, phase_id=phase.id, data=content)
    row = Submission(phase_id=phase.id, user_id=user.id, filename="p.csv", file_key=stored.key,
                     file_sha256=stored.sha256, file_size=stored.size, status="received", idempotency_key=key)
    ctx.session.add(row)
    ctx.session.commit()
    return row


class Recorder:
    """A dispatcher that only records what it was asked to score."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def dispatch(self, submission_id: int) -> None:
        """Record the id."""
        self.ids.append(submission_id)


def test_backoff_doubles_from_retry_seconds_up_to_an_hour(ctx):
    waits = [recovery.backoff(ctx, n).total_seconds() for n in (1, 2, 3, 30)]
    first = ctx.settings.retry_seconds
    assert waits == [first, 2 * first, 4 * first, 3600]


def test_an_unacknowledged_upload_is_never_charged_and_settled_only_once_old(ctx, make_phase, make_user,
                                                                           make_predictions):
    phase, user = make_phase(), make_user()
    row = received_row(ctx, phase, user, make_predictions())
    assert recovery.sweep(ctx) == []
    assert fresh(ctx, row.id).status == "received"  # its request may still be validating it
    recovery.sweep(ctx, now=utcnow() + timedelta(seconds=ctx.settings.stale_seconds + 1))
    settled = fresh(ctx, row.id)
    assert (settled.status, settled.failure_detail, settled.quota_day) == ("failed", claims.NOT_ACKNOWLEDGED, None)
    assert "not charged" in settled.validation_errors["errors"][0]["message"]
    assert charged(ctx, phase, user) == 0
    assert ctx.session.scalars(select(Score).where(Score.submission_id == row.id)).all() == []
    assert ctx.storage.exists(row.file_key)  # nothing a user sent is lost


@pytest.mark.parametrize("settled", [False, True], ids=["received", "settled"])
def test_a_retry_with_the_same_key_resumes_an_unacknowledged_upload_and_charges_it_once(
        ctx, make_phase, make_user, make_predictions, settled):
    phase, user = make_phase(max_per_day=3), make_user()
    row = received_row(ctx, phase, user, make_predictions(), key="k-1")
    if settled:
        recovery.sweep(ctx, now=utcnow() + timedelta(seconds=ctx.settings.stale_seconds + 1))
    again = upload(ctx, phase, user, make_predictions(), idempotency_key="k-1")
    assert again.id == row.id and again.status == "scored"
    assert upload(ctx, phase, user, make_predictions(), idempotency_key="k-1").id == row.id
    assert charged(ctx, phase, user) == 1
    assert ctx.session.scalar(select(func.count()).select_from(Submission)
                              .where(Submission.user_id == user.id)) == 1


def test_a_commit_lost_with_its_connection_is_answered_by_what_the_database_holds(
        ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=3), make_user()
    session_type = type(ctx.session)
    real_commit = session_type.commit
    calls = {"n": 0}

    def commit_then_lose_the_answer(self):
        calls["n"] += 1
        real_commit(self)
        if calls["n"] == 2:  # the acknowledgement: committed, but the client hears an error
            raise OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(session_type, "commit", commit_then_lose_the_answer)
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    submission = upload(ctx, phase, user, make_predictions())
    monkeypatch.undo()
    assert submission.status == "queued" and submission.quota_day is not None
    assert charged(ctx, phase, user) == 1


def test_a_commit_that_did_not_happen_charges_nothing_and_answers_an_error(
        ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=3), make_user()
    session_type = type(ctx.session)
    real_commit = session_type.commit
    calls = {"n": 0}

    def lose_the_acknowledgement(self):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("COMMIT", {}, Exception("terminating connection due to administrator command"))
        real_commit(self)

    monkeypatch.setattr(session_type, "commit", lose_the_acknowledgement)
    monkeypatch.setattr(sessions, "QUICK_RETRY_DELAYS", (0, 0))
    with pytest.raises(OperationalError):
        upload(ctx, phase, user, make_predictions())
    monkeypatch.undo()
    ctx.session.rollback()
    assert charged(ctx, phase, user) == 0
    assert ctx.session.scalar(select(func.sum(QuotaUsage.used))) in (0, None)
    assert ctx.session.scalar(select(Submission.status).where(Submission.user_id == user.id)) == "received"


def test_a_stale_scoring_run_is_taken_back_and_its_late_result_dropped(ctx, make_phase, make_user,
                                                                      make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    submission = upload(ctx, phase, user, make_predictions())
    long_ago = utcnow() - timedelta(seconds=ctx.settings.stale_seconds + 60)
    ctx.session.execute(Submission.__table__.update().where(Submission.id == submission.id)
                        .values(status="scoring", scoring_started_at=long_ago))
    ctx.session.commit()
    monkeypatch.setattr(ctx.runtime, "dispatcher", InlineDispatcher(ctx.runtime))
    dispatched = recovery.sweep(ctx, now=utcnow() + timedelta(hours=2))  # past the backoff too
    assert dispatched == [submission.id]
    done = fresh(ctx, submission.id)
    assert (done.status, done.attempts) == ("scored", 1)
    # The presumed-dead run wakes up and tries to record its result with its old claim.
    late = scoring_runs.record_score(ctx, submission=done, phase=phase, results={"overall": {"accuracy": 0.1}},
                                     label_version=phase.label_version, claimed=long_ago)
    assert late is None
    assert len(ctx.session.scalars(select(Score).where(Score.submission_id == submission.id)).all()) == 1


def test_a_queued_row_is_dispatched_once_until_it_is_due_again(ctx, make_phase, make_user, make_predictions,
                                                               monkeypatch):
    phase, user = make_phase(), make_user()
    recorder = Recorder()
    monkeypatch.setattr(ctx.runtime, "dispatcher", recorder)
    submission = upload(ctx, phase, user, make_predictions())
    assert recorder.ids == [submission.id]
    assert recovery.sweep(ctx) == []  # just dispatched: its worker has stale_seconds to take it
    later = utcnow() + timedelta(seconds=ctx.settings.stale_seconds + 1)
    assert recovery.sweep(ctx, now=later) == [submission.id]  # the dispatch was lost: again
    assert recovery.sweep(ctx, now=later) == []  # and only once per stale_seconds
    assert recorder.ids == [submission.id, submission.id]


def test_concurrent_sweeps_score_each_submission_exactly_once(ctx, make_phase, make_user, make_predictions,
                                                              monkeypatch):
    phase, user = make_phase(max_per_day=20), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", Recorder())
    ids = [upload(ctx, phase, user, make_predictions(wrong=n % 4)).id for n in range(6)]
    monkeypatch.setattr(ctx.runtime, "dispatcher", InlineDispatcher(ctx.runtime))
    later = utcnow() + timedelta(seconds=ctx.settings.stale_seconds + 1)
    barrier = threading.Barrier(3)
    dispatched: list[list[int]] = []

    def sweeper() -> None:
        with ctx.runtime.sessions() as session:
            barrier.wait()
            dispatched.append(recovery.sweep(ctx.runtime.context(session), now=later))

    threads = [threading.Thread(target=sweeper) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(i for batch in dispatched for i in batch) == ids
    scores = ctx.session.scalars(select(Score.submission_id).where(Score.submission_id.in_(ids))).all()
    assert sorted(scores) == ids
    assert {fresh(ctx, i).status for i in ids} == {"scored"}


def test_platform_failures_from_before_retries_are_scored_again_without_a_charge(ctx, make_phase, make_user,
                                                                                 make_predictions):
    phase, user = make_phase(max_per_day=3), make_user()
    old = upload(ctx, phase, user, make_predictions())
    invalid_later = upload(ctx, phase, user, make_predictions(wrong=1))
    for row, errors in ((old, None), (invalid_later, {"errors": [], "error_count": 1})):
        row.status, row.failure_detail, row.validation_errors, row.quota_day = "failed", "S3 get: timeout", errors, None
    ctx.session.commit()  # as the scorer before retries left them: failed, refunded
    assert charged(ctx, phase, user) == 2
    assert recovery.requeue_unfinished(ctx) == [old.id]
    assert fresh(ctx, old.id).status == "scored"
    assert fresh(ctx, invalid_later.id).status == "failed"  # the file's own fault stays final
    assert charged(ctx, phase, user) == 2
