"""A submission's status changes: each one a conditional UPDATE, and the acknowledgement of an upload.

``received`` (stored, not answered yet) -> ``queued`` (valid, charged, answered 202) ->
``scoring`` -> ``scored``, or ``failed``. Every change is ``claim``: an UPDATE that applies
only while the row is still in the state the caller saw, so two requests, two sweepers or
a sweeper and a scoring run never both act on one submission.

``acknowledge_upload`` keeps SPEC §7's promises for a stored upload: an invalid file is
kept as failed with its errors and not charged; a valid one is charged and acknowledged
(``queued``) in one transaction. When that commit fails, the row is read again to learn
whether it went through, and only a committed acknowledgement is answered 202. A fresh
upload (services/submissions.py) and a resumed one (services/recovery.py) both end here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, and_, null, or_, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from leaderboard.models import Phase, Submission
from leaderboard.runtime import ServiceContext
from leaderboard.services import entries, quota
from leaderboard.services.errors import (
    Conflict,
    LabelIntegrityError,
    QuotaExceeded,
    ScoringUnavailable,
    SubmissionInvalid,
)
from leaderboard.services.labelsets import load_phase_labels
from leaderboard.storage.base import StorageError
from scoring import PredictionFileError, read_predictions

log = logging.getLogger(__name__)

QUICK_RETRY_DELAYS = (0.2, 1.0)
"""Pauses between the in-process tries of one attempt, before it is postponed."""
TRANSIENT = (StorageError, DBAPIError)
"""Failures worth a quick retry in process: storage or database briefly away."""
UNAVAILABLE = "Scoring of this phase is unavailable right now; nothing was charged. Please upload again later."
"""What a participant reads when an upload meets a label file failing its integrity check (503)."""
NOT_ACKNOWLEDGED = "not acknowledged: the upload stopped before it was accepted; not charged, not scored"

T = TypeVar("T")


def claim(ctx: ServiceContext, submission_id: int, held: ColumnElement[bool], **values: Any) -> bool:
    """Set values on the submission's row only while ``held`` is true of it; return whether it was."""
    result = ctx.session.execute(
        update(Submission).where(Submission.id == submission_id, held).values(**values)
        .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def held_by(claimed: datetime) -> ColumnElement[bool]:
    """Return the condition that the scoring run which claimed the row at ``claimed`` still holds it."""
    return and_(Submission.status == "scoring", Submission.scoring_started_at == claimed)


def unacknowledged() -> ColumnElement[bool]:
    """Return the condition of an upload stored but never acknowledged (received, or settled as such)."""
    return or_(Submission.status == "received",
               and_(Submission.status == "failed", Submission.failure_detail == NOT_ACKNOWLEDGED))


def is_unacknowledged(submission: Submission) -> bool:
    """Return whether this row is an upload stored but never acknowledged."""
    return submission.status == "received" or (
        submission.status == "failed" and submission.failure_detail == NOT_ACKNOWLEDGED)


def quick_retries(action: Callable[[], T], *, session: Session, what: str) -> T:
    """Run action; on a transient error roll back, pause briefly and try again (the last error propagates)."""
    for delay in QUICK_RETRY_DELAYS:
        try:
            return action()
        except TRANSIENT as error:
            rollback_quietly(session)
            log.warning("%s failed (%s); trying again in %.1f s", what, type(error).__name__, delay)
            time.sleep(delay)
    return action()


def rollback_quietly(session: Session) -> None:
    """Roll the session back; on a dead connection, drop the connection instead of raising."""
    try:
        session.rollback()
    except Exception:  # the connection is gone: drop it so the pool opens a new one
        log.warning("rollback failed; discarding the session's connection", exc_info=True)
        discard_session(session)


def discard_session(session: Session) -> None:
    """Close the session and drop its connection without a rollback: loaded objects stay readable, detached."""
    try:
        session.invalidate()
    except Exception:  # nothing more to do for a connection that is already gone
        log.warning("discarding a database session failed", exc_info=True)


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
        entries.check_method_cap(ctx, phase=phase, user_id=submission.user_id, team_id=submission.team_id,
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
