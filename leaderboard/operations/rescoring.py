"""Re-score a phase as a background job, in batches, while its board stays readable.

Each submission ever scored (scored, or failed against a later label version) is scored
again against the phase's current labels. Its old score stays active until the new one
replaces it: the row is taken (``scoring``) and given its new score by
``scoring_runs.record_score`` in one transaction, so no reader ever sees it without a
score. Progress and the resume point (the last submission id done) are committed after
every batch; a run killed mid-batch resumes after the last committed batch and scores
that batch's first few submissions once more (a retired row more, the same numbers).
Submissions queued or being scored meanwhile are left to their own run, which reads the
current labels too.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Any

from sqlalchemy import Select, func, select, update

from leaderboard.disclosure import with_draw
from leaderboard.entries import quota
from leaderboard.models import Job, Phase, Score, Submission
from leaderboard.notify import events as notices
from leaderboard.operations import jobs
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.sessions import quick_retries
from leaderboard.submissions import claim, record_score
from scoring import LabelSet, PredictionFileError, evaluate, read_predictions
from scoring.correctness import item_correctness

log = logging.getLogger(__name__)

BATCH = 50
"""Submissions scored between two progress commits."""
BOARD_EVERY_SECONDS = 5.0
"""How often a running re-score refreshes the board (and once at the end); readers see old scores meanwhile."""
RESCORED = ("scored", "failed")


def eligible(phase_id: int, after: int = 0) -> Select[Any]:
    """Return the query of a phase's submissions a re-score covers (ever scored, not in flight), by id."""
    ever_scored = select(Score.submission_id)
    return (select(Submission.id)
            .where(Submission.phase_id == phase_id, Submission.id > after, Submission.status.in_(RESCORED),
                   Submission.id.in_(ever_scored))
            .order_by(Submission.id))


def count_eligible(ctx: ServiceContext, *, phase_id: int) -> int:
    """Return how many submissions a re-score of the phase would cover."""
    return int(ctx.session.scalar(select(func.count()).select_from(eligible(phase_id).subquery())) or 0)


def run_rescore(ctx: ServiceContext, *, job_id: int, token: str) -> None:
    """Re-score the job's phase batch by batch from its resume point; stop when the job is no longer ours."""
    job = ctx.session.get(Job, job_id, populate_existing=True)
    assert job is not None and job.phase_id is not None
    phase_id, params, done = job.phase_id, dict(job.params), job.done
    if "cursor" not in params:  # a first run counts what it will do (more may have been scored since queued)
        jobs.progress(ctx, job_id=job_id, token=token, done=0, total=count_eligible(ctx, phase_id=phase_id))
    refreshed = time.monotonic()
    while True:
        ids = list(ctx.session.scalars(eligible(phase_id, int(params.get("cursor", 0))).limit(BATCH)))
        if not ids:
            ctx.board_changed(phase_id=phase_id)
            return
        phase = ctx.session.get(Phase, phase_id, populate_existing=True)
        assert phase is not None
        labels = load_phase_labels(ctx, phase)
        for submission_id in ids:
            quick_retries(partial(rescore_one, ctx, submission_id=submission_id, phase=phase, labels=labels),
                          session=ctx.session, what=f"re-scoring submission {submission_id}")
        params["cursor"], done = ids[-1], done + len(ids)
        if not jobs.progress(ctx, job_id=job_id, token=token, done=done, params=params):
            log.info("job %s was taken over or superseded; this run stops", job_id)
            return
        if time.monotonic() - refreshed >= BOARD_EVERY_SECONDS:
            ctx.board_changed(phase_id=phase_id)
            refreshed = time.monotonic()


def rescore_one(ctx: ServiceContext, *, submission_id: int, phase: Phase, labels: LabelSet) -> bool:
    """Score one submission again against labels and make the result its active score; return whether it was."""
    submission = ctx.session.get(Submission, submission_id, populate_existing=True)
    if submission is None or submission.status not in RESCORED:
        ctx.session.rollback()
        return False
    version, was_scored = phase.label_version, submission.status == "scored"
    data = ctx.storage.read_bytes(submission.file_key)
    try:
        predictions = read_predictions(data, labels, max_bytes=ctx.settings.max_upload_bytes)
    except PredictionFileError as error:
        _fail_invalid(ctx, submission, version=version, errors=error.to_json(), refund=was_scored)
        return False
    results = with_draw(evaluate(labels, predictions), predictions)
    claimed = utcnow()
    # Taken and scored in one transaction: readers see the old score until the new one is committed.
    if not claim(ctx, submission_id, Submission.status.in_(RESCORED), status="scoring", scoring_started_at=claimed):
        ctx.session.rollback()
        return False
    if ctx.session.scalar(select(Phase.label_version).where(Phase.id == phase.id)) != version:
        ctx.session.rollback()  # labels replaced meanwhile: the newer job scores it on them
        return False
    return record_score(ctx, submission=submission, phase=phase, results=results, label_version=version,
                        claimed=claimed, correctness=item_correctness(labels, predictions)) is not None


def _fail_invalid(ctx: ServiceContext, submission: Submission, *, version: int, errors: dict[str, object],
                  refund: bool) -> None:
    """Mark a submission failed against the new labels, retire its active score, refund it if it was charged."""
    if not claim(ctx, submission.id, Submission.status.in_(RESCORED), status="failed", validation_errors=errors,
                 failure_detail=f"the file is not valid against label version {version}"):
        ctx.session.rollback()
        return
    ctx.session.execute(update(Score).where(Score.submission_id == submission.id, Score.retired_at.is_(None))
                        .values(retired_at=utcnow()).execution_options(synchronize_session=False))
    if refund:
        quota.refund(ctx, submission=submission)
    notices.submission_failed(ctx, submission=submission)  # the owner's mail, in this transaction (docs/NOTIFY.md)
    ctx.session.commit()
