"""Scoring runs: rescoring keeps history, platform failures are retried, dispatchers, refunds."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.entries import quota
from leaderboard.models import Baseline, Score, Submission
from leaderboard.organizing import phases
from leaderboard.platform import sessions
from leaderboard.platform.runtime import CeleryDispatcher, InlineDispatcher, make_dispatcher
from leaderboard.platform.storage.base import StorageError
from leaderboard.submissions import accept_submission, active_score, recovery, scoring_runs, store_file


def upload(ctx, phase, user, content: bytes):
    """Accept content as an upload by user."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def scores_of(ctx, submission_id: int) -> list[Score]:
    """Return every score row of a submission, oldest first, read fresh."""
    ctx.session.expire_all()
    return list(ctx.session.scalars(select(Score).where(Score.submission_id == submission_id).order_by(Score.id)))


def test_rescoring_retires_old_scores_and_keeps_history(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(), make_user()
    submission = upload(ctx, phase, user, make_predictions(wrong=2))
    job = phases.rescore_phase(ctx, actor=OPERATOR, phase_id=phase.id)  # run inline in tests
    ctx.session.refresh(job)
    assert (job.status, job.done, job.total) == ("done", 4, 4)  # the participant's and three built-in baselines
    history = scores_of(ctx, submission.id)
    assert len(history) == 2
    assert history[0].retired_at is not None and history[1].retired_at is None
    assert history[0].results == history[1].results
    assert ctx.session.get(Submission, submission.id).status == "scored"


def test_replacing_labels_rescores_against_the_new_version(ctx, make_phase, make_user, make_predictions,
                                                           labels_file):
    phase, user = make_phase(), make_user()
    submission = upload(ctx, phase, user, make_predictions())
    flipped = labels_file().replace(b'"label": "true"', b'"label": "TMP"').replace(
        b'"label": "false"', b'"label": "true"').replace(b'"label": "TMP"', b'"label": "false"')
    phases.replace_labels(ctx, actor=OPERATOR, phase_id=phase.id, labels=flipped)
    old, new = scores_of(ctx, submission.id)
    assert (old.label_version, old.public_primary) == (1, 1.0)
    assert (new.label_version, new.public_primary, new.retired_at) == (2, 0.0, None)
    assert ctx.labels.exists(f"labels/sha256/{hashlib.sha256(labels_file()).hexdigest()}.jsonl")  # v1 is kept
    assert ctx.labels.read_bytes(ctx.session.get(type(phase), phase.id).labels_key) == flipped


def test_replacing_labels_refreshes_the_majority_baseline(ctx, make_phase, labels_file):
    phase = make_phase()
    all_false = labels_file().replace(b'"label": "true"', b'"label": "false"')
    phases.replace_labels(ctx, actor=OPERATOR, phase_id=phase.id, labels=all_false)
    majority = ctx.session.scalar(select(Baseline).where(Baseline.phase_id == phase.id,
                                                         Baseline.name == "Majority class"))
    assert active_score(majority.submission).public_primary == 1.0
    assert b"true" not in ctx.storage.read_bytes(majority.submission.file_key).split(b"\n", 1)[1]


def test_replacing_labels_with_fewer_ids_fails_old_files_with_validation_errors(ctx, make_phase, make_user,
                                                                                make_predictions, labels_file):
    phase, user = make_phase(max_per_day=3), make_user()
    submission = upload(ctx, phase, user, make_predictions())
    fewer = b"".join(line + b"\n" for line in labels_file().splitlines()[:6])
    phases.replace_labels(ctx, actor=OPERATOR, phase_id=phase.id, labels=fewer)
    ctx.session.expire_all()
    failed = ctx.session.get(Submission, submission.id)
    assert failed.status == "failed"
    assert {e["id"] for e in failed.validation_errors["errors"]} == {"q7", "q8"}
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 0


def test_a_platform_failure_queues_the_submission_again_and_keeps_its_charge(ctx, make_phase, make_user,
                                                                            make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=2), make_user()
    monkeypatch.setattr(scoring_runs, "evaluation", lambda *a: 1 / 0)
    submission = upload(ctx, phase, user, make_predictions())
    assert (submission.status, submission.attempts) == ("queued", 1)
    assert "ZeroDivisionError" in submission.failure_detail and submission.next_attempt_at > submission.created_at
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1  # acknowledged: it will be scored
    monkeypatch.undo()
    recovery.sweep(ctx, now=submission.next_attempt_at)
    ctx.session.expire_all()
    scored = ctx.session.get(Submission, submission.id)
    assert (scored.status, scored.attempts, scored.failure_detail) == ("scored", 1, None)
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1


def test_a_platform_failure_ends_failed_and_refunded_once_only_after_max_attempts(ctx, make_phase, make_user,
                                                                                 make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=2), make_user()
    monkeypatch.setattr(scoring_runs, "evaluation", lambda *a: 1 / 0)
    submission = upload(ctx, phase, user, make_predictions())
    assert upload(ctx, phase, user, make_predictions(wrong=1)).status == "queued"
    submission.attempts = recovery.MAX_ATTEMPTS - 1
    ctx.session.commit()
    scoring_runs.score_submission(ctx, submission_id=submission.id)
    ctx.session.expire_all()
    failed = ctx.session.get(Submission, submission.id)
    assert (failed.status, failed.attempts) == ("failed", recovery.MAX_ATTEMPTS)
    assert "gave up" in failed.failure_detail and failed.quota_day is None
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1
    failed.status = "queued"  # an operator queues it again by hand, and it fails again: no second refund
    ctx.session.commit()
    scoring_runs.score_submission(ctx, submission_id=submission.id)
    assert recovery.requeue_unfinished(ctx) == [submission.id + 1]  # the other one; the given-up one stays failed
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1


def test_storage_errors_are_tried_again_in_process_before_the_attempt_fails(ctx, make_phase, make_user,
                                                                           make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()
    monkeypatch.setattr(sessions, "QUICK_RETRY_DELAYS", (0, 0))
    real_read = type(ctx.storage).read_bytes
    failures = iter([True, True])

    def flaky_read(self, key):
        if next(failures, False):
            raise StorageError("S3 get of the file failed: Read timeout")
        return real_read(self, key)

    monkeypatch.setattr(type(ctx.storage), "read_bytes", flaky_read)
    submission = upload(ctx, phase, user, make_predictions())
    assert (submission.status, submission.attempts) == ("scored", 0)


def test_score_submission_leaves_finished_submissions_alone(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(), make_user()
    submission = upload(ctx, phase, user, make_predictions())
    scoring_runs.score_submission(ctx, submission_id=submission.id)
    scoring_runs.score_submission(ctx, submission_id=10**6)
    assert len(scores_of(ctx, submission.id)) == 1


class Recorder:
    """A dispatcher that only records what it was asked to score."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def dispatch(self, submission_id: int) -> None:
        """Record the id."""
        self.ids.append(submission_id)


def test_a_crash_leaves_every_acknowledged_submission_scored_and_charges_nothing_else(
        ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=10), make_user()
    recorder = Recorder()
    monkeypatch.setattr(ctx.runtime, "dispatcher", recorder)  # the worker never runs: "crash" after commit
    queued = upload(ctx, phase, user, make_predictions())
    assert queued.status == "queued" and recorder.ids == [queued.id]
    received = _received_row(ctx, phase, user, make_predictions(wrong=1))  # stored, never acknowledged
    stuck = upload(ctx, phase, user, make_predictions(wrong=3))
    stuck.status = "scoring"
    ctx.session.commit()
    monkeypatch.setattr(ctx.runtime, "dispatcher", InlineDispatcher(ctx.runtime))
    assert recovery.requeue_unfinished(ctx) == [queued.id, stuck.id]
    ctx.session.expire_all()
    statuses = {s.id: s.status for s in ctx.session.scalars(select(Submission).where(Submission.user_id == user.id))}
    assert statuses == {queued.id: "scored", received.id: "received", stuck.id: "scored"}
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 2  # the two acknowledged ones


def _received_row(ctx, phase, user, content: bytes) -> Submission:
    """Store a file and commit its row as 'received', as a crash right after storing leaves it."""
    stored = store_file(ctx, phase_id=phase.id, data=content)
    row = Submission(phase_id=phase.id, user_id=user.id, filename="p.csv", file_key=stored.key,
                     file_sha256=stored.sha256, file_size=stored.size, status="received")
    ctx.session.add(row)
    ctx.session.commit()
    return row


def test_failed_dispatch_leaves_the_submission_queued(ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()

    class Down:
        def dispatch(self, submission_id: int) -> None:
            raise ConnectionError("broker unreachable")

    monkeypatch.setattr(ctx.runtime, "dispatcher", Down())
    submission = upload(ctx, phase, user, make_predictions())
    assert submission.status == "queued"
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1


def test_celery_dispatcher_sends_the_named_task():
    sent = []

    class FakeCelery:
        def send_task(self, name, args):
            sent.append((name, args))

    CeleryDispatcher(FakeCelery()).dispatch(42)
    assert sent == [("tailboard.score_submission", [42])]


@pytest.mark.backends("sqlite")
def test_make_dispatcher_follows_the_scoring_mode(runtime):
    import dataclasses

    assert isinstance(make_dispatcher(runtime), InlineDispatcher)
    runtime.settings = dataclasses.replace(runtime.settings, scoring_mode="celery",
                                           celery_broker_url="memory://")
    assert isinstance(make_dispatcher(runtime), CeleryDispatcher)


def test_private_primary_comes_from_the_private_split(ctx, make_phase, make_user, make_predictions, labels_file):
    phase, user = make_phase(private=True), make_user()
    # q1..q4 are public, q5..q8 private: two wrong answers on private items only
    submission = upload(ctx, phase, user, make_predictions(labels_file(private=True), wrong={"q5", "q6"}))
    score = active_score(submission)
    assert (score.public_primary, score.private_primary) == (1.0, 0.5)
    assert json.dumps(score.results)  # stored as plain JSON


def test_labels_replaced_during_scoring_score_again_on_the_new_version(ctx, make_phase, make_user,
                                                                       make_predictions, labels_file, monkeypatch):
    phase, user = make_phase(), make_user()
    real_evaluate = scoring_runs.evaluation
    replaced = []

    def evaluate_then_replace(labels, predictions):
        results = real_evaluate(labels, predictions)
        if not replaced:  # an organizer replaces the labels while this run is in flight
            replaced.append(True)
            with ctx.runtime.sessions() as other:
                other_ctx = ctx.runtime.context(other)
                current = other_ctx.session.get(type(phase), phase.id)
                current.label_version += 1
                stored = other_ctx.labels.put(f"phases/{phase.id}/labels-v{current.label_version}.jsonl",
                                              labels_file().replace(b'"label": "true"', b'"label": "false"'))
                current.labels_key, current.labels_sha256 = stored.key, stored.sha256
                other.commit()
        return results

    monkeypatch.setattr(scoring_runs, "evaluation", evaluate_then_replace)
    submission = upload(ctx, phase, user, make_predictions())
    history = scores_of(ctx, submission.id)
    assert [(s.label_version, s.retired_at is None) for s in history] == [(2, True)]
    assert history[0].public_primary == pytest.approx(3 / 8)
