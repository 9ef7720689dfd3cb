"""The acknowledgement of a stored upload: validated, then charged and queued in one transaction.

``acknowledge_upload`` keeps docs/RULES.md's promises for a stored upload: an invalid file is
kept as failed with its errors and not charged; a valid one is charged and acknowledged
(``queued``) in one transaction. When that commit fails, the row is read again to learn
whether it went through, and only a committed acknowledgement is answered 202. A fresh
upload (submissions/intake.py) and a resumed one (submissions/recovery.py) both end here.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import null, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm.attributes import set_committed_value

from leaderboard.entries import quota, rules
from leaderboard.models import Phase, Submission
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import (
    Conflict,
    LabelIntegrityError,
    QuotaExceeded,
    ScoringUnavailable,
    ServiceContext,
    SubmissionInvalid,
)
from leaderboard.platform.sessions import discard_session, quick_retries
from leaderboard.submissions.claims import claim, unacknowledged
from scoring import PredictionFileError, read_predictions

UNAVAILABLE = "Scoring of this phase is unavailable right now; nothing was charged. Please upload again later."
"""What a participant reads when an upload meets a label file failing its integrity check (503)."""


def acknowledge_upload(ctx: ServiceContext, *, submission: Submission, phase: Phase, data: bytes,
                       fresh: bool) -> Submission:
    """Validate a stored upload, then charge and acknowledge it together and dispatch it.

    While the phase's label file fails its integrity check nothing can be validated: a
    fresh upload is dropped (row and file) and refused with ScoringUnavailable, uncharged.
    """
    try:
        labels = load_phase_labels(ctx, phase)
    except LabelIntegrityError:
        if fresh:
            _drop(ctx, submission)
        raise ScoringUnavailable(UNAVAILABLE, {"charged": False}) from None
    try:
        read_predictions(data, labels, max_bytes=ctx.settings.max_upload_bytes)
    except PredictionFileError as error:
        if claim(ctx, submission.id, unacknowledged(), status="failed", validation_errors=error.to_json(),
                 failure_detail=None):
            ctx.session.commit()
            _set_loaded(submission, status="failed", validation_errors=error.to_json(), failure_detail=None)
        raise SubmissionInvalid(invalid_message(error.error_count), error.to_json(), submission.id) from None
    if not _charge_and_queue(ctx, submission=submission, phase=phase, fresh=fresh):
        ctx.session.refresh(submission)  # another request (a retry with the same key) settled it first
        return outcome(submission)
    ctx.dispatch([submission.id])
    if submission in ctx.session:  # (not after a lost connection: then the answer is what we know)
        try:  # inline scoring may have finished it; unlike refresh, a failed get leaves the row readable
            ctx.session.get(Submission, submission.id, populate_existing=True)
        except DBAPIError:  # acknowledged and charged: the answer is 202 with the status we know
            discard_session(ctx.session)
    return submission


def outcome(first: Submission) -> Submission:
    """Return an acknowledged submission, or raise again the validation error it was refused with."""
    if first.status == "failed" and first.validation_errors is not None:
        errors: dict[str, Any] = first.validation_errors
        raise SubmissionInvalid(invalid_message(int(errors.get("error_count", 0))), errors, first.id)
    return first


def invalid_message(count: int) -> str:
    """Return the one-line summary of a validation failure."""
    return f"The file was not accepted: {count} problem{'s' if count != 1 else ''} found. Nothing was charged."


def _charge_and_queue(ctx: ServiceContext, *, submission: Submission, phase: Phase, fresh: bool) -> bool:
    """Charge the quota and mark the upload queued in one transaction; False if it was no longer unacknowledged.

    The owner's quota row stays locked until the commit, so the method cap checked after
    the charge counts every upload of the owner acknowledged before this one.
    """
    file_key = submission.file_key
    owner = quota.owner_key(user_id=submission.user_id, team_id=submission.team_id)
    try:
        if not claim(ctx, submission.id, unacknowledged(), status="queued", validation_errors=null(),
                     failure_detail=None, next_attempt_at=None):
            ctx.session.rollback()
            return False
        day: str | None = quota.charge(ctx, phase=phase, owner=owner)
        rules.check_method_cap(ctx, phase=phase, user_id=submission.user_id, team_id=submission.team_id,
                                 method=submission.method, exclude_id=submission.id)
        claim(ctx, submission.id, Submission.status == "queued", quota_day=day)
        ctx.session.commit()
    except (QuotaExceeded, Conflict):
        ctx.session.rollback()
        if fresh:  # a fresh upload over quota is refused, not kept
            _drop(ctx, submission, file_key=file_key)
        raise
    except DBAPIError:
        # The commit may have gone through before the connection died: ask again, and answer
        # 202 only if it did. The session is dropped, not rolled back, so the row's loaded
        # values stay readable without the database.
        discard_session(ctx.session)
        committed = _read_again(ctx, submission.id)
        if committed is None or committed[0] in ("received", "failed"):
            raise
        day = committed[1]
    _set_loaded(submission, status="queued", quota_day=day, validation_errors=None, failure_detail=None)
    return True


def _drop(ctx: ServiceContext, submission: Submission, *, file_key: str | None = None) -> None:
    """Delete a fresh upload that is refused (its row, then its stored file): it was never acknowledged."""
    file_key = file_key or submission.file_key
    ctx.session.delete(submission)
    ctx.session.commit()
    ctx.storage.delete(file_key)


def _set_loaded(submission: Submission, **values: Any) -> None:
    """Record values the database now holds (written by a conditional UPDATE) on the loaded row."""
    for name, value in values.items():
        set_committed_value(submission, name, value)


def _read_again(ctx: ServiceContext, submission_id: int) -> tuple[str, str | None] | None:
    """Return the upload's (status, quota_day) read in a fresh session, or None when the database cannot say."""
    def read() -> tuple[str, str | None] | None:
        with ctx.runtime.sessions() as session:
            row = session.execute(select(Submission.status, Submission.quota_day)
                                  .where(Submission.id == submission_id)).one_or_none()
            return None if row is None else (row[0], row[1])

    try:
        return quick_retries(read, session=ctx.session, what=f"reading upload {submission_id} again")
    except DBAPIError:
        return None
