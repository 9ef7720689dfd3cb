"""Scoring runs: score one queued submission, requeue unfinished ones, rescore a phase.

A submission moves queued -> scoring -> scored | failed. Scores are never
overwritten: a new Score row retires the previous active ones (``retired_at``).
A platform failure (anything but an invalid file) marks the submission failed with
a detail for organizers only and refunds the participant's quota.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from sqlalchemy import select, update

from leaderboard.db import utcnow
from leaderboard.models import Phase, Score, Submission
from leaderboard.runtime import ServiceContext
from leaderboard.services import quota
from leaderboard.services.dispatch import dispatch_all
from leaderboard.services.labelsets import (
    PredictionFileError, evaluate, load_phase_labels, primary_metric, read_predictions,
)

log = logging.getLogger(__name__)

UNFINISHED = ("received", "queued", "scoring")


def score_submission(ctx: ServiceContext, *, submission_id: int) -> None:
    """Score a queued submission and record the result; a finished one is left alone."""
    submission = ctx.session.get(Submission, submission_id)
    if submission is None or submission.status not in ("queued", "scoring"):
        log.info("submission %s is not waiting to be scored; nothing to do", submission_id)
        return
    submission.status = "scoring"
    ctx.session.commit()
    phase = submission.phase
    label_version = phase.label_version
    try:
        labels = load_phase_labels(ctx, phase)
        data = ctx.storage.read_bytes(submission.file_key)
        predictions = read_predictions(data, labels, max_bytes=ctx.settings.max_upload_bytes)
        results = evaluate(labels, predictions)
    except PredictionFileError as error:
        detail = f"the file is not valid against label version {label_version}"
        _fail(ctx, submission, detail=detail, validation_errors=error.to_json())
        return
    except Exception:  # a platform failure: recorded for organizers, quota refunded, never re-raised to a participant
        log.exception("scoring submission %s failed", submission_id)
        _fail(ctx, submission, detail=traceback.format_exc(limit=20))
        return
    current = ctx.session.scalar(select(Phase.label_version).where(Phase.id == phase.id))
    if current != label_version:  # the labels were replaced while we scored: score again on the new ones
        submission.status = "queued"
        ctx.session.commit()
        dispatch_all(ctx, [submission.id])
        return
    record_score(ctx, submission=submission, phase=phase, results=results, label_version=label_version)


def record_score(
    ctx: ServiceContext, *, submission: Submission, phase: Phase, results: dict[str, Any], label_version: int
) -> Score:
    """Store a result as the submission's one active score and mark it scored."""
    metric = primary_metric(phase)
    public, private = primary_values(results, metric)
    score = Score(submission_id=submission.id, label_version=label_version, results=results,
                  public_primary=public, private_primary=private)
    ctx.session.add(score)
    ctx.session.flush()
    ctx.session.execute(
        update(Score)
        .where(Score.submission_id == submission.id, Score.retired_at.is_(None), Score.id != score.id)
        .values(retired_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    submission.status = "scored"
    submission.failure_detail = None
    ctx.session.commit()
    ctx.session.expire(submission, ["scores"])
    return score


def primary_values(results: dict[str, Any], metric: str) -> tuple[float | None, float | None]:
    """Return (public, private) primary metric; without splits the overall value is the public one."""
    splits = results.get("splits")
    if not splits:
        return _metric(results, metric), None
    return _metric(splits.get("public"), metric), _metric(splits.get("private"), metric)


def requeue_unfinished(ctx: ServiceContext) -> list[int]:
    """Dispatch again every received, queued or scoring submission (after a crash or an outage)."""
    from leaderboard.services.submissions import finish_received

    rows = list(ctx.session.scalars(
        select(Submission).where(Submission.status.in_(UNFINISHED)).order_by(Submission.id)))
    for submission in rows:
        if submission.status == "received":
            finish_received(ctx, submission=submission)
    ids = [s.id for s in rows if s.status in ("queued", "scoring")]
    dispatch_all(ctx, ids)
    return ids


def requeue_phase(ctx: ServiceContext, *, phase: Phase) -> list[int]:
    """Retire the active scores of a phase and queue every submission ever scored there again."""
    ever_scored = select(Score.submission_id)
    rows = list(ctx.session.scalars(
        select(Submission)
        .where(Submission.phase_id == phase.id, Submission.status.in_(("scored", "failed")),
               Submission.id.in_(ever_scored))
        .order_by(Submission.id)
    ))
    ids = [s.id for s in rows]
    if ids:
        ctx.session.execute(
            update(Score)
            .where(Score.submission_id.in_(ids), Score.retired_at.is_(None))
            .values(retired_at=utcnow())
            .execution_options(synchronize_session=False)
        )
    for submission in rows:
        submission.status = "queued"
        submission.failure_detail = None
        submission.validation_errors = None
    ctx.session.commit()
    dispatch_all(ctx, ids)
    return ids


def _fail(ctx: ServiceContext, submission: Submission, *, detail: str,
          validation_errors: dict[str, Any] | None = None) -> None:
    """Mark the submission failed, keep why, and refund its quota unit."""
    ctx.session.rollback()
    submission.status = "failed"
    submission.failure_detail = detail
    if validation_errors is not None:
        submission.validation_errors = validation_errors
    quota.refund(ctx, submission=submission)
    ctx.session.commit()


def _metric(result: Any, metric: str) -> float | None:
    """Return result['overall'][metric] as a float, or None when absent or null."""
    if not isinstance(result, dict):
        return None
    value = (result.get("overall") or {}).get(metric)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
