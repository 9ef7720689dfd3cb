"""Scoring runs: score one queued submission; ``record_score`` (rescoring records its scores with it too).

A run claims its submission (queued -> scoring, stamped with its own
``scoring_started_at``; ``score_next`` takes the fairest one of submissions/queue.py),
renews its lease while it works (platform/leases.py), and records a result only while it still holds that claim, so a
run presumed dead and taken back by the sweep never adds a second score. It ends
scored; failed when the file is invalid against the current labels (quota refunded);
or, on a platform failure (storage or database away after a few quick tries, a bug),
queued again with backoff by ``recovery.retry_later``, charge kept: an acknowledged
submission is always scored. A label file failing its integrity check is never scored
against: the run logs an ERROR and ``recovery.wait_for_labels`` queues it again with
its charge refunded at once, until the file is restored.
Scores are never overwritten: a new Score row retires the previous active ones
(``retired_at``). A recorded score is announced with ``ctx.board_changed``.
"""

from __future__ import annotations

import logging
import time
import traceback
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from leaderboard.disclosure import with_draw
from leaderboard.entries import quota
from leaderboard.models import Phase, Score, Submission
from leaderboard.notify import events as notices
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import LabelIntegrityError, ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.leases import Renew, renewing
from leaderboard.platform.sessions import quick_retries, rollback_quietly
from leaderboard.submissions import queue, recovery
from leaderboard.submissions.claims import claim, held_by
from scoring import PredictionFileError, read_predictions
from scoring.correctness import ItemCorrectness, item_correctness
from scoring.evaluate import evaluation
from scoring.metrics.paths import path_value

log = logging.getLogger(__name__)


def score_submission(ctx: ServiceContext, *, submission_id: int) -> None:
    """Claim this queued submission and score it; a platform failure queues it again with backoff."""
    claimed = utcnow()
    if not claim(ctx, submission_id, Submission.status == "queued", **queue.claim_values(ctx, claimed)):
        ctx.session.rollback()
        log.info("submission %s is not waiting to be scored; nothing to do", submission_id)
        return
    ctx.session.commit()
    _score_claimed(ctx, submission_id, claimed)


def score_next(ctx: ServiceContext) -> int | None:
    """Claim the fairest ready submission (submissions/queue.py) and score it; return its id, None when none waits."""
    taken = queue.claim_next(ctx)
    if taken is None:
        return None
    _score_claimed(ctx, *taken)
    return taken[0]


def wake_scorer(ctx: ServiceContext, *, submission_id: int) -> None:
    """Score ready submissions in fair order until none waits (a Celery task: the id it carries is only a wake-up).

    Draining, not scoring one, so that a wake-up lost with a killed worker leaves no ready
    submission waiting for the sweep's next wake-up: whichever worker runs next takes them all.
    Once per lease it takes back runs whose lease lapsed (recovery.take_back_lapsed): the
    sweep's own task may wait behind this one in the broker's queue for as long as it drains.
    """
    scored = []
    take_back_at = 0.0
    for _ in range(queue.WINDOW):
        if time.monotonic() >= take_back_at:
            recovery.take_back_lapsed(ctx)
            take_back_at = time.monotonic() + ctx.settings.lease_seconds
        picked = score_next(ctx)
        if picked is None:
            break
        scored.append(picked)
    log.info("woken for submission %s, scored %s", submission_id, scored or "none")


def score_in_turn(ctx: ServiceContext, *, submission_id: int) -> None:
    """Score ready submissions in fair order until this one has been taken (embedded mode's dispatch)."""
    for _ in range(queue.WINDOW):
        picked = score_next(ctx)
        if picked is None or picked == submission_id or not _waiting(ctx, submission_id):
            return


def _waiting(ctx: ServiceContext, submission_id: int) -> bool:
    """Return whether the submission is still ready to be scored."""
    return ctx.session.scalar(select(Submission.id).where(Submission.id == submission_id, queue.ready())) is not None


def _score_claimed(ctx: ServiceContext, submission_id: int, claimed: datetime) -> None:
    """Score a submission this run claimed at ``claimed``, renewing its lease meanwhile (platform/leases.py)."""
    with renewing(ctx.runtime.sessions, _renewer(submission_id, claimed), lease_seconds=ctx.settings.lease_seconds,
                  what=f"submission {submission_id}"):
        try:
            quick_retries(lambda: _run(ctx, submission_id, claimed), session=ctx.session,
                          what=f"scoring submission {submission_id}")
        except LabelIntegrityError as error:
            rollback_quietly(ctx.session)
            log.error("submission %s is not scored: phase %s's label file fails its integrity check; its charge "
                      "is refunded and it waits, queued, until an organizer restores the file", submission_id,
                      error.phase_id)
            recovery.wait_for_labels(ctx, submission_id=submission_id, claimed=claimed, detail=str(error))
        except Exception as error:  # any other failure is the platform's, never the participant's: retried later
            rollback_quietly(ctx.session)
            log.exception("scoring submission %s failed; it is queued again", submission_id)
            recovery.retry_later(ctx, submission_id=submission_id, claimed=claimed, detail=_describe(error))


def _renewer(submission_id: int, claimed: datetime) -> Renew:
    """Return the renewal of the lease of the run that claimed the submission at ``claimed``."""
    def renew(session: Session, until: datetime) -> bool:
        result = session.execute(update(Submission).where(Submission.id == submission_id, held_by(claimed))
                                 .values(lease_until=until).execution_options(synchronize_session=False))
        session.commit()
        return result.rowcount == 1  # type: ignore[attr-defined]

    return renew


def record_score(
    ctx: ServiceContext, *, submission: Submission, phase: Phase, results: dict[str, Any], label_version: int,
    claimed: datetime, correctness: ItemCorrectness | None = None, slice_tables: list[Any] | None = None,
) -> Score | None:
    """Store a result as the submission's one active score and mark it scored, if the run still holds its claim.

    ``correctness`` (scoring.correctness) is kept as bits for the board's McNemar test, and
    ``slice_tables`` (scoring.metrics.reuse) for the next re-score; the caller announces the
    change to the board (``ctx.board_changed``) once committed.
    """
    if not claim(ctx, submission.id, held_by(claimed), status="scored", failure_detail=None,
                 next_attempt_at=None, scoring_started_at=None):
        ctx.session.rollback()
        log.warning("submission %s was taken back from this run (presumed dead); its result is dropped",
                    submission.id)
        return None
    public, private = primary_values(results, phase.primary_metric)
    correct, answered = correctness.packed() if correctness is not None else (None, None)
    score = Score(submission_id=submission.id, label_version=label_version, results=results,
                  public_primary=public, private_primary=private, correct_bits=correct, answered_bits=answered,
                  slice_tables=slice_tables)
    ctx.session.add(score)
    ctx.session.flush()
    ctx.session.execute(
        update(Score)
        .where(Score.submission_id == submission.id, Score.retired_at.is_(None), Score.id != score.id)
        .values(retired_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    notices.submission_scored(ctx, submission=submission, phase=phase, score=score)  # docs/NOTIFY.md
    ctx.session.commit()
    ctx.session.expire(submission)
    return score


def primary_values(results: dict[str, Any], metric: str) -> tuple[float | None, float | None]:
    """Return (public, private) value of the primary metric path; without splits the whole result is the public one."""
    splits = results.get("splits")
    if not splits:
        return path_value(results, metric), None
    return path_value(splits.get("public"), metric), path_value(splits.get("private"), metric)


def _run(ctx: ServiceContext, submission_id: int, claimed: datetime) -> None:
    """Score the claimed submission against its phase's current labels and record the outcome."""
    submission = ctx.session.get(Submission, submission_id, populate_existing=True)
    if submission is None:  # deleted with its phase meanwhile
        return
    phase = ctx.session.get(Phase, submission.phase_id, populate_existing=True)
    assert phase is not None  # a phase takes its submissions with it
    label_version = phase.label_version
    labels = load_phase_labels(ctx, phase)
    data = ctx.storage.read_bytes(submission.file_key)
    try:
        predictions = read_predictions(data, labels, max_bytes=ctx.settings.max_upload_bytes)
    except PredictionFileError as error:
        _fail_invalid(ctx, submission, claimed, detail=f"the file is not valid against label version "
                                                       f"{label_version}", errors=error.to_json())
        return
    found = evaluation(labels, predictions)
    results = with_draw(found.results, predictions)
    current = ctx.session.scalar(select(Phase.label_version).where(Phase.id == phase.id))
    if current != label_version:  # the labels were replaced while we scored: score again on the new ones
        if claim(ctx, submission_id, held_by(claimed), status="queued", scoring_started_at=None,
                 next_attempt_at=None):
            ctx.session.commit()
            ctx.dispatch([submission_id])
        return
    if record_score(ctx, submission=submission, phase=phase, results=results, label_version=label_version,
                    claimed=claimed, correctness=item_correctness(labels, predictions),
                    slice_tables=found.tables) is not None:
        ctx.board_changed(phase_id=phase.id, submission_ids=[submission.id])


def _fail_invalid(ctx: ServiceContext, submission: Submission, claimed: datetime, *, detail: str,
                  errors: dict[str, Any]) -> None:
    """End a claimed submission failed with its validation errors, and refund its quota unit."""
    if claim(ctx, submission.id, held_by(claimed), status="failed", failure_detail=detail,
             validation_errors=errors, scoring_started_at=None, next_attempt_at=None):
        quota.refund(ctx, submission=submission)
        notices.submission_failed(ctx, submission=submission)  # docs/NOTIFY.md
    ctx.session.commit()
    ctx.session.expire(submission)


def _describe(error: BaseException) -> str:
    """Return an error's one-line summary, then where it was raised, for organizers (never for participants)."""
    summary = "".join(traceback.format_exception_only(error)).strip()
    return f"{summary}\n{''.join(traceback.format_exception(error, limit=-6)).strip()[-3000:]}"
