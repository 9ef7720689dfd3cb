"""Submissions: accept an upload (store, validate, charge, queue), look them up.

The order of ``accept_submission`` is what keeps SPEC §7's promises: the file is
stored and its row committed before anything else can fail, an invalid file is
kept as failed (with its errors) and not charged, and a valid one is charged and
committed as queued in one transaction before it is dispatched.
"""

from __future__ import annotations

import re
from typing import Any, BinaryIO

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from leaderboard.models import Baseline, Phase, Score, Submission, User
from leaderboard.runtime import ServiceContext
from leaderboard.services import quota
from leaderboard.services.baselines import add_baseline
from leaderboard.services.dispatch import dispatch_all
from leaderboard.services.errors import Conflict, InvalidInput, NotFound, QuotaExceeded, SubmissionInvalid
from leaderboard.services.labelsets import PredictionFileError, load_phase_labels, read_predictions
from leaderboard.services.permissions import Actor, can_manage
from leaderboard.services.phases import get_phase, managed_phase, phase_status
from leaderboard.services.uploads import read_bounded, store_submission_file
from leaderboard.services.visibility import private_hidden, visible_results

__all__ = ["accept_submission", "active_score", "add_baseline", "finish_received", "get_submission",
           "list_phase_submissions", "list_submissions", "scores_scope", "visible_scores"]

MAX_KEY_LENGTH = 200


def accept_submission(
    ctx: ServiceContext,
    *,
    phase_id: int,
    user: User,
    filename: str,
    stream: BinaryIO | bytes,
    description: str = "",
    idempotency_key: str | None = None,
) -> Submission:
    """Store, validate, charge and queue an upload; a reused Idempotency-Key returns the first result."""
    phase = get_phase(ctx, phase_id)
    key = _checked_key(idempotency_key)
    first = _by_key(ctx, user, key)
    if first is not None:
        return _replay(first, phase)
    if phase_status(phase) != "open":
        raise Conflict("This phase is not open for submissions.")
    quota.check_available(ctx, phase=phase, user=user)
    data = read_bounded(stream, limit=ctx.settings.max_upload_bytes)
    stored = store_submission_file(ctx, phase_id=phase.id, data=data)
    submission = Submission(
        phase_id=phase.id, user_id=user.id, description=description.strip()[:500], filename=_safe_name(filename),
        file_key=stored.key, file_sha256=stored.sha256, file_size=stored.size, status="received",
        idempotency_key=key,
    )
    ctx.session.add(submission)
    try:
        ctx.session.commit()
    except IntegrityError:  # the same key raced us; the winner's row is the answer
        ctx.session.rollback()
        ctx.storage.delete(stored.key)
        first = _by_key(ctx, user, key)
        if first is None:
            raise
        return _replay(first, phase)
    return _finish(ctx, submission=submission, phase=phase, data=data, user=user)


def finish_received(ctx: ServiceContext, *, submission: Submission) -> None:
    """Validate and charge a submission left 'received' by a crash; it ends queued or failed."""
    data = ctx.storage.read_bytes(submission.file_key)
    try:
        _finish(ctx, submission=submission, phase=submission.phase, data=data, user=submission.user, dispatch=False)
    except SubmissionInvalid:
        pass  # kept as failed with its validation errors, as on upload
    except QuotaExceeded as error:
        submission.status = "failed"
        submission.failure_detail = "quota exhausted when resumed after a crash"
        submission.validation_errors = {"errors": [{"line": None, "id": None, "message": error.message}],
                                        "error_count": 1}
        ctx.session.commit()


def get_submission(ctx: ServiceContext, *, submission_id: int, viewer: User | None) -> Submission:
    """Return a submission its owner or its competition's managers may see (baselines: anyone), else NotFound."""
    submission = ctx.session.get(Submission, submission_id)
    if submission is None or not _may_see(submission, viewer):
        raise NotFound(f"No submission {submission_id}.")
    return submission


def list_submissions(ctx: ServiceContext, *, phase_id: int, user: User) -> list[Submission]:
    """Return the user's own submissions to a phase, newest first."""
    get_phase(ctx, phase_id)
    return list(ctx.session.scalars(
        select(Submission)
        .where(Submission.phase_id == phase_id, Submission.user_id == user.id, Submission.is_baseline.is_(False))
        .order_by(Submission.created_at.desc(), Submission.id.desc())
    ))


def list_phase_submissions(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> list[Submission]:
    """Return every submission of a phase, newest first (Forbidden unless actor manages the competition)."""
    managed_phase(ctx, phase_id=phase_id, actor=actor)
    return list(ctx.session.scalars(
        select(Submission).where(Submission.phase_id == phase_id)
        .order_by(Submission.created_at.desc(), Submission.id.desc())
    ))


def active_score(submission: Submission) -> Score | None:
    """Return the submission's current (not retired) score, or None."""
    active = [s for s in submission.scores if s.retired_at is None]
    return active[-1] if active else None


def visible_scores(ctx: ServiceContext, *, submission: Submission, viewer: User | None) -> dict[str, Any] | None:
    """Return the active score's results as viewer may see them (rounded; private split for managers only)."""
    score = active_score(submission)
    if score is None:
        return None
    builtin = ctx.session.scalar(select(Baseline.kind).where(Baseline.submission_id == submission.id)) == "builtin"
    return visible_results(score.results, phase=submission.phase, viewer_is_organizer=_manages(submission, viewer),
                           overall_only=builtin)


def scores_scope(ctx: ServiceContext, *, submission: Submission, viewer: User | None) -> str | None:
    """Return which items visible_scores covers: 'public' while the private split is hidden from viewer, else 'all'."""
    score = active_score(submission)
    if score is None:
        return None
    hidden = not _manages(submission, viewer) and private_hidden(score.results, phase=submission.phase)
    return "public" if hidden else "all"


def _finish(ctx: ServiceContext, *, submission: Submission, phase: Phase, data: bytes, user: User,
            dispatch: bool = True) -> Submission:
    """Validate a stored submission, charge the quota and queue it (or keep it failed)."""
    try:
        read_predictions(data, load_phase_labels(ctx, phase), max_bytes=ctx.settings.max_upload_bytes)
    except PredictionFileError as error:
        submission.status = "failed"
        submission.validation_errors = error.to_json()
        ctx.session.commit()
        raise SubmissionInvalid(_invalid_message(error.error_count), error.to_json(), submission.id) from None
    file_key = submission.file_key
    try:
        submission.quota_day = quota.charge(ctx, phase=phase, user=user)
    except QuotaExceeded:
        ctx.session.rollback()
        if dispatch:  # a fresh upload over quota is refused, not kept
            ctx.session.delete(submission)
            ctx.session.commit()
            ctx.storage.delete(file_key)
        raise
    submission.status = "queued"
    ctx.session.commit()
    if dispatch:
        dispatch_all(ctx, [submission.id])
        ctx.session.refresh(submission)
    return submission


def _replay(first: Submission, phase: Phase) -> Submission:
    """Return the first submission made with an Idempotency-Key, or raise its first error again."""
    if first.phase_id != phase.id:
        raise Conflict("This Idempotency-Key was already used for an upload to another phase.")
    if first.status == "failed" and first.validation_errors is not None:
        errors: dict[str, Any] = first.validation_errors
        raise SubmissionInvalid(_invalid_message(int(errors.get("error_count", 0))), errors, first.id)
    return first


def _by_key(ctx: ServiceContext, user: User, key: str | None) -> Submission | None:
    """Return the user's submission made with this Idempotency-Key, if any."""
    if key is None:
        return None
    return ctx.session.scalar(
        select(Submission).where(Submission.user_id == user.id, Submission.idempotency_key == key))


def _checked_key(key: str | None) -> str | None:
    """Return the trimmed Idempotency-Key (None when empty), or raise InvalidInput when too long."""
    if key is None or not key.strip():
        return None
    key = key.strip()
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"An Idempotency-Key has at most {MAX_KEY_LENGTH} characters.")
    return key


def _may_see(submission: Submission, viewer: User | None) -> bool:
    """Return whether viewer may see this submission's page."""
    if submission.is_baseline:
        return True
    return viewer is not None and (viewer.id == submission.user_id or _manages(submission, viewer))


def _manages(submission: Submission, viewer: User | None) -> bool:
    """Return whether viewer manages the submission's competition (None is an anonymous visitor here)."""
    return viewer is not None and can_manage(submission.phase.competition, viewer)


def _safe_name(filename: str | None) -> str:
    """Return the base name of an uploaded file, without paths or control characters, at most 255 long."""
    name = re.split(r"[\\/]", filename or "")[-1]
    name = re.sub(r"[\x00-\x1f\x7f]", "", name).strip()
    return (name or "predictions")[:255]


def _invalid_message(count: int) -> str:
    """Return the one-line summary of a validation failure."""
    return f"The file was not accepted: {count} problem{'s' if count != 1 else ''} found. Nothing was charged."
