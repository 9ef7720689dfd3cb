"""A label file failing its integrity check: nothing is scored against it, nothing is charged for it, it is said.

QA's findings: ``rescore`` retired every score before the check and exited 0; a scoring run
kept the charge through 30 retries; an upload got a generic 500 and left a row ``received``.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from sqlalchemy import func, select

from leaderboard.entries import quota
from leaderboard.models import Job, Phase, Score, Submission
from leaderboard.platform import ServiceContext
from leaderboard.submissions import accept_submission, active_score, recovery, scoring_runs


def _corrupt(ctx: ServiceContext, phase: Phase) -> bytes:
    """Flip one label in the stored file (as a crash or a person might); return the original bytes."""
    path = ctx.settings.labels_dir / phase.labels_key
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"label": "true"', b'"label": "false"', 1))
    ctx.runtime.caches.clear()  # another process: nothing parsed yet
    return original


def _restore(ctx: ServiceContext, phase: Phase, original: bytes) -> None:
    (ctx.settings.labels_dir / phase.labels_key).write_bytes(original)


def test_a_scoring_run_on_a_broken_file_is_refunded_at_once_and_scored_once_the_file_is_restored(
        ctx, make_phase, make_user, make_predictions, monkeypatch, caplog) -> None:
    phase, user = make_phase(max_per_day=1), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", None)  # accepted and charged; a worker scores it later
    submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                   stream=io.BytesIO(make_predictions()))
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1
    original = _corrupt(ctx, phase)
    with caplog.at_level(logging.ERROR):
        scoring_runs.score_submission(ctx, submission_id=submission.id)
    ctx.session.expire_all()
    waiting = ctx.session.get(Submission, submission.id)
    assert waiting.status == "queued" and waiting.attempts == 0  # not an attempt: it never gives up on it
    assert "label file fails its integrity check" in waiting.failure_detail  # the organizers' submissions page
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 0  # refunded at once
    assert any(r.levelno == logging.ERROR and f"submission {submission.id}" in r.getMessage() for r in caplog.records)
    assert not ctx.session.scalars(select(Score).where(Score.submission_id == submission.id)).all()
    assert recovery.requeue_unfinished(ctx) == [submission.id]  # still broken: waits again, refunded once
    ctx.session.expire_all()
    assert ctx.session.get(Submission, submission.id).status == "queued"
    scoring_runs.score_submission(ctx, submission_id=submission.id)  # the worker tries again: still broken
    _restore(ctx, phase, original)
    assert recovery.requeue_unfinished(ctx) == [submission.id]
    scoring_runs.score_submission(ctx, submission_id=submission.id)
    ctx.session.expire_all()
    done = ctx.session.get(Submission, submission.id)
    assert done.status == "scored" and active_score(done).public_primary == 1.0  # against its own labels
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 0  # no second charge


def test_rescore_refuses_a_broken_file_before_touching_anything_and_exits_non_zero(
        ctx, runner, make_phase, make_user, make_predictions) -> None:
    phase, user = make_phase(), make_user()
    submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                   stream=io.BytesIO(make_predictions()))
    original = _corrupt(ctx, phase)
    result = runner.invoke(args=["rescore", str(phase.id)])
    assert result.exit_code != 0
    assert "fails its integrity check" in result.output and "Nothing was retired or queued" in result.output
    ctx.session.expire_all()
    assert active_score(ctx.session.get(Submission, submission.id)) is not None  # the board keeps its scores
    assert ctx.session.scalar(select(func.count()).select_from(Job)) == 0
    _restore(ctx, phase, original)
    assert runner.invoke(args=["rescore", str(phase.id)]).exit_code == 0


def test_the_api_refuses_a_rescore_on_a_broken_file_with_503(ctx, client, make_phase, make_competition,
                                                             make_organizer, make_token) -> None:
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer))
    headers = {"Authorization": f"Bearer {make_token(organizer)}"}
    _corrupt(ctx, phase)
    response = client.post(f"/api/v1/phases/{phase.id}/rescore", headers=headers)
    body: dict[str, Any] = response.get_json()
    assert response.status_code == 503 and set(body) == {"error", "details"}
    assert "fails its integrity check" in body["error"]


def test_an_api_upload_on_a_broken_file_is_a_503_that_charges_and_keeps_nothing(
        ctx, client, make_phase, make_user, make_token, make_predictions) -> None:
    phase, user = make_phase(max_per_day=1), make_user()
    _corrupt(ctx, phase)
    response = client.post(f"/api/v1/phases/{phase.id}/submissions", headers={
        "Authorization": f"Bearer {make_token(user)}"}, data={"file": (io.BytesIO(make_predictions()), "p.csv")})
    body = response.get_json()
    assert response.status_code == 503
    assert body == {"error": "Scoring of this phase is unavailable right now; nothing was charged. "
                             "Please upload again later.", "details": {"charged": False}}
    assert phase.labels_sha256 not in response.get_data(as_text=True)  # nothing about the file for participants
    ctx.session.expire_all()
    assert ctx.session.scalars(select(Submission).where(Submission.user_id == user.id)).all() == []
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 0


def test_a_web_upload_on_a_broken_file_says_so_on_the_page(ctx, client, make_phase, make_user, login, csrf_token,
                                                           make_predictions) -> None:
    phase, user = make_phase(), make_user()
    login(client, user)
    token = csrf_token(client, f"/phases/{phase.id}")
    _corrupt(ctx, phase)
    response = client.post(f"/phases/{phase.id}", data={
        "csrf_token": token, "file": (io.BytesIO(make_predictions()), "p.csv")}, content_type="multipart/form-data")
    assert response.status_code == 503
    assert "Scoring of this phase is unavailable right now; nothing was charged." in response.get_data(as_text=True)
    ctx.session.expire_all()
    assert ctx.session.scalars(select(Submission).where(Submission.user_id == user.id)).all() == []
