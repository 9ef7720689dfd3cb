"""Submissions: accept an upload (store it, then hand it to acknowledge.acknowledge_upload), list and show them.

The order of ``accept_submission`` is what keeps docs/RULES.md's promises: the file is stored
and its row committed as ``received`` before anything else can fail; then
``acknowledge.acknowledge_upload`` validates it, and charges and acknowledges it together.
A ``received`` row that no request acknowledged is never charged later
(submissions/recovery.py settles it); a retry with the same Idempotency-Key resumes it
(``recovery.finish_received``). Who may see a submission is decided in accounts/access.py.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any, BinaryIO

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from leaderboard.accounts import (
    Actor,
    confirmation,
    get_phase,
    managed_phase,
    manages_submission,
    participation,
    phase_status,
    team_of,
)
from leaderboard.disclosure import private_hidden, submission_decision, visible_results
from leaderboard.entries import quota, rules
from leaderboard.models import Phase, Score, Submission, User
from leaderboard.platform import Conflict, InvalidInput, ServiceContext, TooLarge
from leaderboard.platform.storage.base import StoredObject
from leaderboard.submissions import recovery
from leaderboard.submissions.acknowledge import acknowledge_upload, outcome
from leaderboard.submissions.claims import is_unacknowledged
from scoring import FileTooLarge, read_bounded

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
    method: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Submission:
    """Store, validate, charge and queue an upload; a reused Idempotency-Key returns the first result.

    The upload belongs to the entry (the uploader's team in the competition, or the
    uploader; method, 'default' when not given); a new method past the phase's
    max_methods is refused (Conflict) before anything is stored or charged, and so is an
    uploader who must still confirm their email or be approved (Forbidden).
    """
    phase = get_phase(ctx, phase_id)
    key = _checked_key(idempotency_key)
    first = _by_key(ctx, user, key)
    if first is not None:
        return _replay(ctx, first, phase)
    if phase_status(phase) != "open":
        raise Conflict("This phase is not open for submissions.")
    confirmation.ensure_confirmed(ctx, user=user)
    participation.ensure_may_submit(ctx, phase=phase, user=user)
    method, checked_metadata = rules.check_method(method), rules.check_metadata(metadata)
    team = team_of(ctx, competition_id=phase.competition_id, user_id=user.id)
    team_id = None if team is None else team.id
    quota.check_available(ctx, phase=phase, owner=quota.owner_key(user_id=user.id, team_id=team_id))
    rules.check_method_cap(ctx, phase=phase, user_id=user.id, team_id=team_id, method=method)
    data = read_upload(stream, limit=ctx.settings.max_upload_bytes)
    stored = store_file(ctx, phase_id=phase.id, data=data)
    submission = Submission(
        phase_id=phase.id, user_id=user.id, description=description.strip()[:500], filename=_safe_name(filename),
        file_key=stored.key, file_sha256=stored.sha256, file_size=stored.size, status="received",
        idempotency_key=key, method=method, entry_metadata=checked_metadata, team_id=team_id,
    )
    winner = _insert_received(ctx, submission, user=user, phase=phase)
    if winner is not None:
        return winner
    return acknowledge_upload(ctx, submission=submission, phase=phase, data=data, fresh=True)


def _insert_received(ctx: ServiceContext, submission: Submission, *, user: User, phase: Phase) -> Submission | None:
    """Commit the stored upload's row; when its Idempotency-Key raced another request, return that one's answer."""
    file_key, key = submission.file_key, submission.idempotency_key  # read before a rollback can expire them
    ctx.session.add(submission)
    try:
        ctx.session.commit()
    except IntegrityError:  # the same key raced us; the winner's row is the answer
        ctx.session.rollback()
        ctx.storage.delete(file_key)
        first = _by_key(ctx, user, key)
        if first is None:
            raise
        return _replay(ctx, first, phase)
    return None


def list_submissions(ctx: ServiceContext, *, phase_id: int, user: User) -> list[Submission]:
    """Return the submissions of the user's entries in a phase (their team's when they have one), newest first."""
    phase = get_phase(ctx, phase_id)
    team = team_of(ctx, competition_id=phase.competition_id, user_id=user.id)
    mine = rules.owner_filter(user_id=user.id, team_id=None if team is None else team.id)
    if team is not None:  # uploads made before joining stay listed (joining after submitting is refused)
        mine = mine | (Submission.user_id == user.id)
    return list(ctx.session.scalars(
        select(Submission)
        .where(Submission.phase_id == phase_id, mine, Submission.is_baseline.is_(False))
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
    manager = manages_submission(submission, viewer)
    ladder = None if manager else submission_decision(ctx, submission=submission, score=score)
    return visible_results(score.results, phase=submission.phase, viewer_is_organizer=manager, ladder=ladder)


def scoring_attempts(submission: Submission, viewer: User | None) -> int | None:
    """Return the submission's failed scoring attempts to a manager of its competition; None to anyone else."""
    return submission.attempts if manages_submission(submission, viewer) else None


def scores_scope(ctx: ServiceContext, *, submission: Submission, viewer: User | None) -> str | None:
    """Return which items visible_scores covers: 'public' while the private split is hidden from viewer, else 'all'."""
    score = active_score(submission)
    if score is None:
        return None
    hidden = not manages_submission(submission, viewer) and private_hidden(score.results, phase=submission.phase)
    return "public" if hidden else "all"


def _replay(ctx: ServiceContext, first: Submission, phase: Phase) -> Submission:
    """Return the first submission made with an Idempotency-Key (resuming it if never acknowledged)."""
    if first.phase_id != phase.id:
        raise Conflict("This Idempotency-Key was already used for an upload to another phase.")
    if is_unacknowledged(first):
        if phase_status(phase) != "open":
            raise Conflict("This phase is not open for submissions.")
        return recovery.finish_received(ctx, submission=first)
    return outcome(first)


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


def _safe_name(filename: str | None) -> str:
    """Return the base name of an uploaded file, without paths or control characters, at most 255 long."""
    name = re.split(r"[\\/]", filename or "")[-1]
    name = re.sub(r"[\x00-\x1f\x7f]", "", name).strip()
    return (name or "predictions")[:255]


def read_upload(stream: BinaryIO | bytes, *, limit: int) -> bytes:
    """Return the whole upload (scoring's bounded read), or raise TooLarge (413) as soon as it passes limit bytes."""
    try:
        return read_bounded(stream, limit=limit)
    except FileTooLarge:
        raise TooLarge(_too_large_message(limit)) from None


def store_file(ctx: ServiceContext, *, phase_id: int, data: bytes) -> StoredObject:
    """Store an uploaded prediction file durably under submissions/<phase>/<uuid>."""
    return ctx.storage.put(f"submissions/{phase_id}/{uuid.uuid4().hex}", data)


def _too_large_message(limit: int) -> str:
    """Return the participant-facing message for an upload over limit bytes."""
    unit, size = ("MiB", 1024 * 1024) if limit >= 1024 * 1024 else ("KiB", 1024)
    return f"The file is larger than this instance accepts ({round(limit / size, 1):g} {unit} at most)."
