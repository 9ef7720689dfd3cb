"""Accepting submissions: store, validate, charge the quota, queue, score inline (docs/RULES.md)."""

from __future__ import annotations

import dataclasses
import io

import pytest
from sqlalchemy import func, select

from leaderboard import submissions
from leaderboard.accounts import access
from leaderboard.entries import quota
from leaderboard.models import QuotaUsage, Submission
from leaderboard.platform import Conflict, InvalidInput, NotFound, QuotaExceeded, SubmissionInvalid, TooLarge
from leaderboard.platform.storage.base import StorageError
from leaderboard.submissions import accept_submission, active_score, scoring_runs


def upload(ctx, phase, user, content: bytes, **kwargs):
    """Accept content as a CSV upload by user."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="predictions.csv",
                             stream=io.BytesIO(content), **kwargs)


def used(ctx, phase, user) -> quota.QuotaStatus:
    """Return the user's quota status in phase, read fresh."""
    ctx.session.expire_all()
    return quota.quota_status(ctx, phase=phase, user=user)


def test_valid_upload_is_stored_charged_and_scored_inline(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(max_per_day=3), make_user()
    submission = upload(ctx, phase, user, make_predictions(wrong=2), description="  first try ")
    assert submission.status == "scored"
    assert submission.description == "first try"
    assert ctx.storage.read_bytes(submission.file_key) == make_predictions(wrong=2)
    assert submission.file_key.startswith(f"submissions/{phase.id}/")
    score = active_score(submission)
    assert score is not None and score.public_primary == pytest.approx(6 / 8)
    assert score.private_primary is None
    assert score.results["overall"]["correct"] == 6
    assert used(ctx, phase, user).used_today == 1
    assert submission.quota_day == used(ctx, phase, user).day


def test_failed_submissions_not_counted_towards_max(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(max_per_day=1, max_total=1), make_user()
    with pytest.raises(SubmissionInvalid) as caught:
        upload(ctx, phase, user, b"id,prediction\nq1,maybe\nnope,true\n")
    details = caught.value.details
    assert details["error_count"] == 2
    assert [e["line"] for e in details["errors"]] == [2, 3]
    kept = ctx.session.get(Submission, caught.value.submission_id)
    assert kept.status == "failed" and kept.validation_errors == details and kept.quota_day is None
    assert used(ctx, phase, user).used_today == 0 and used(ctx, phase, user).used_total == 0
    assert upload(ctx, phase, user, make_predictions()).status == "scored"


def test_invalid_file_never_reaches_the_scorer(ctx, make_phase, make_user, monkeypatch):
    phase, user = make_phase(), make_user()
    called = []
    monkeypatch.setattr(scoring_runs, "evaluation", lambda *a: called.append(a))
    with pytest.raises(SubmissionInvalid):
        upload(ctx, phase, user, b"")
    assert called == []


def test_daily_limit_is_exact_and_says_when_it_resets(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(max_per_day=2), make_user()
    for _ in range(2):
        upload(ctx, phase, user, make_predictions())
    with pytest.raises(QuotaExceeded) as caught:
        upload(ctx, phase, user, make_predictions())
    status = used(ctx, phase, user)
    assert caught.value.resets_at == status.resets_at
    assert (status.resets_at.hour, status.resets_at.minute) == (0, 0)
    assert status.resets_at.strftime("%Y-%m-%d") > status.day
    assert status.used_today == 2 and status.remaining_today == 0 and status.remaining == 0
    assert ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.user_id == user.id)) == 2


def test_total_limit_is_exact_and_never_resets(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(max_total=2), make_user()
    upload(ctx, phase, user, make_predictions())
    upload(ctx, phase, user, make_predictions(wrong=1))
    with pytest.raises(QuotaExceeded) as caught:
        upload(ctx, phase, user, make_predictions())
    assert caught.value.resets_at is None
    assert used(ctx, phase, user).remaining_total == 0


def test_quota_is_per_user_and_per_phase(ctx, make_phase, make_user, make_competition, make_predictions):
    competition = make_competition()
    first, second = make_phase(competition, max_per_day=1), make_phase(competition, name="Phase 2", max_per_day=1)
    alice, bob = make_user(), make_user()
    upload(ctx, first, alice, make_predictions())
    upload(ctx, first, bob, make_predictions())
    upload(ctx, second, alice, make_predictions())
    with pytest.raises(QuotaExceeded):
        upload(ctx, first, alice, make_predictions())


def test_charge_stops_at_the_limit_within_one_transaction(ctx, make_phase, make_user):
    phase, user = make_phase(max_per_day=2), make_user()
    quota.charge(ctx, phase=phase, owner=f"user:{user.id}")
    quota.charge(ctx, phase=phase, owner=f"user:{user.id}")
    with pytest.raises(QuotaExceeded):
        quota.charge(ctx, phase=phase, owner=f"user:{user.id}")
    ctx.session.commit()
    rows = {u.day: u.used for u in ctx.session.scalars(select(QuotaUsage))}
    assert sorted(rows.values()) == [2, 2] and "total" in rows


def test_upload_to_a_phase_that_is_not_open_is_refused(ctx, make_phase, make_user, make_predictions, make_competition):
    user = make_user()
    for status in ("upcoming", "closed"):
        phase = make_phase(make_competition(), status=status)
        with pytest.raises(Conflict):
            upload(ctx, phase, user, make_predictions())
    assert ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.is_baseline.is_(False))) == 0


def test_upload_over_the_size_limit_is_refused_before_storing(ctx, make_phase, make_user, monkeypatch):
    phase, user = make_phase(), make_user()
    monkeypatch.setattr(ctx.runtime, "settings", dataclasses.replace(ctx.runtime.settings, max_upload_bytes=100))
    with pytest.raises(TooLarge):
        upload(ctx, phase, user, b"id,prediction\n" + b"q1,true\n" * 100)
    assert list(ctx.storage.iter_keys("submissions/")) == sorted(
        s.file_key for s in ctx.session.scalars(select(Submission)))


def test_idempotency_key_returns_the_first_submission_without_charging(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(max_per_day=5), make_user()
    first = upload(ctx, phase, user, make_predictions(), idempotency_key="retry-1")
    again = upload(ctx, phase, user, make_predictions(wrong=3), idempotency_key="retry-1")
    assert again.id == first.id
    assert active_score(again).public_primary == 1.0
    assert used(ctx, phase, user).used_today == 1
    other = make_user()
    assert upload(ctx, phase, other, make_predictions(), idempotency_key="retry-1").id != first.id


def test_idempotency_key_replays_a_validation_failure(ctx, make_phase, make_user):
    phase, user = make_phase(), make_user()
    with pytest.raises(SubmissionInvalid) as first:
        upload(ctx, phase, user, b"id,prediction\nq1,maybe\n", idempotency_key="k")
    with pytest.raises(SubmissionInvalid) as second:
        upload(ctx, phase, user, b"id,prediction\nq1,true\n", idempotency_key="k")
    assert second.value.submission_id == first.value.submission_id
    assert second.value.details == first.value.details


def test_idempotency_key_of_another_phase_is_a_conflict(ctx, make_phase, make_user, make_predictions,
                                                        make_competition):
    user = make_user()
    upload(ctx, make_phase(), user, make_predictions(), idempotency_key="k")
    with pytest.raises(Conflict):
        upload(ctx, make_phase(make_competition()), user, make_predictions(), idempotency_key="k")
    with pytest.raises(InvalidInput):
        upload(ctx, make_phase(make_competition()), user, make_predictions(), idempotency_key="x" * 201)


def test_platform_failure_is_retried_with_its_charge_and_the_detail_hidden(ctx, make_phase, make_user,
                                                                          make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=1), make_user()

    def broken(*args):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(scoring_runs, "evaluation", broken)
    submission = upload(ctx, phase, user, make_predictions())
    assert (submission.status, submission.attempts) == ("queued", 1)
    assert "disk on fire" in submission.failure_detail and submission.validation_errors is None
    assert used(ctx, phase, user).used_today == 1 and submission.quota_day is not None
    monkeypatch.undo()
    scoring_runs.score_submission(ctx, submission_id=submission.id)  # what the sweep does when it is due
    ctx.session.expire_all()
    assert ctx.session.get(Submission, submission.id).status == "scored"
    assert used(ctx, phase, user).used_today == 1


def test_unreadable_stored_file_is_retried_not_failed(ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day=1), make_user()
    storage = ctx.storage
    real = storage.read_bytes
    monkeypatch.setattr("leaderboard.platform.sessions.QUICK_RETRY_DELAYS", (0, 0))
    monkeypatch.setattr(storage, "read_bytes", lambda key: (_ for _ in ()).throw(StorageError("gone"))
                        if key.startswith("submissions/") else real(key))
    submission = upload(ctx, phase, user, make_predictions())
    assert submission.status == "queued" and "gone" in submission.failure_detail
    assert used(ctx, phase, user).used_today == 1


def test_owner_and_organizers_see_a_submission_others_do_not(ctx, make_phase, make_user, make_organizer,
                                                             make_competition, make_predictions):
    owner, other, organizer, stranger = make_user(), make_user(), make_organizer(), make_organizer()
    phase = make_phase(make_competition(created_by=organizer))
    submission = upload(ctx, phase, owner, make_predictions())
    assert access.get_submission(ctx, submission_id=submission.id, viewer=owner).id == submission.id
    assert access.get_submission(ctx, submission_id=submission.id, viewer=organizer).id == submission.id
    for viewer in (other, stranger, None):
        with pytest.raises(NotFound):
            access.get_submission(ctx, submission_id=submission.id, viewer=viewer)
    assert [s.id for s in submissions.list_submissions(ctx, phase_id=phase.id, user=owner)] == [submission.id]
    assert submissions.list_submissions(ctx, phase_id=phase.id, user=other) == []


def test_zip_and_json_uploads_are_accepted(ctx, make_phase, make_user, make_predictions):
    import json
    import zipfile

    phase, user = make_phase(), make_user()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("answers.csv", make_predictions())
    assert upload(ctx, phase, user, buffer.getvalue()).status == "scored"
    mapping = {f"q{i}": True for i in range(1, 9)}
    assert upload(ctx, phase, user, json.dumps(mapping).encode()).status == "scored"
