"""Crash recovery: retries with backoff, the sweep, and uploads stored but never acknowledged.

docs/RULES.md: every acknowledged (202) submission ends scored, or stays queued to be scored.
Every way back from a crash lives here; the status changes themselves are
submissions/claims.py's conditional UPDATEs.

- A label file failing its integrity check is waited out: ``wait_for_labels`` refunds the
  charge at once and queues the submission again every LABEL_RETRY without counting an
  attempt, so it is scored (free) once an organizer restores the file, never before.
- A scoring attempt that fails on the platform's side otherwise (storage or database
  away, a bug) is not final. ``retry_later`` puts the
  submission back to ``queued`` with ``attempts + 1`` and ``next_attempt_at`` = now +
  ``retry_seconds`` doubled per attempt, at most an hour. It keeps its quota charge: it
  was acknowledged and it will be scored. Only after MAX_ATTEMPTS (30: about a day of
  hourly retries) does it end ``failed``, and then its charge is refunded.
- ``sweep`` also announces phases opened or closed by their dates (notify/phase_notices.py).
- ``sweep`` runs every ``sweep_seconds`` (Celery beat in celery mode, a timer thread of
  each web process in embedded mode: leaderboard/workers/sweeper.py); ``requeue_unfinished`` is
  the release step's and an operator's ``flask --app app requeue``. Both wake scorers for
  queued submissions that are due (a retry whose time came, or one left untouched for
  three leases: its wake-up was lost with a killed process or a broker outage; an extra
  wake-up only scores the fairest submission sooner), take back ``scoring`` ones whose lease lapsed (their
  scorer stopped renewing it: killed or lost; that counts as an attempt, due again at
  once the first time; a row scored before leases existed lapses after ``stale_seconds``),
  and queue again the platform failures recorded as final before retries existed.
- Every pick-up is a conditional UPDATE on the row's current state (``claims.claim``),
  and a scoring run records its result only while it still holds its own claim
  (scoring_runs), so concurrent sweepers never score one submission twice.
- Uploads never acknowledged: a ``received`` row is a file stored by a request that did
  not answer 202 (it crashed, or lost the database, between storing and acknowledging).
  Charging it later would charge without a 202; scoring it free would let a crash buy a
  submission past the quota. So once older than ``stale_seconds`` it is settled as
  ``failed`` "not acknowledged": not charged, not scored, file and row kept, and the
  participant sees why. A retry of that upload with the same Idempotency-Key resumes it
  (``finish_received``: validated, charged and acknowledged together, in the request
  that answers 202).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, String, and_, cast, or_, select

from leaderboard.accounts import status_at
from leaderboard.entries import quota
from leaderboard.models import Submission
from leaderboard.notify import phase_notices
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.sessions import TRANSIENT, quick_retries, rollback_quietly
from leaderboard.submissions.acknowledge import acknowledge_upload
from leaderboard.submissions.claims import NOT_ACKNOWLEDGED, claim, held_by

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 30
"""Scoring attempts before a platform failure becomes final (failed, quota refunded)."""
BACKOFF_CAP = timedelta(hours=1)
LABEL_RETRY = timedelta(minutes=10)
"""How often a submission waiting for its phase's label file to be restored is tried again."""
LABELS_BROKEN = "the phase's label file fails its integrity check"
BATCH = 200
WAKE_AFTER_LEASES = 3
"""A queued submission untouched for this many leases (60 s) gets a scorer woken for it again (a lost wake-up)."""
"""Rows of each kind one sweep takes; the next sweep takes the rest."""

NOT_ACKNOWLEDGED_MESSAGE = (
    "This upload was interrupted before it was accepted, so it was not charged and will not be scored. "
    "Upload the file again (an API retry with the same Idempotency-Key resumes this one)."
)


def finish_received(ctx: ServiceContext, *, submission: Submission) -> Submission:
    """Resume an upload stored but never acknowledged (a retry with its Idempotency-Key): validate, charge, queue."""
    data = ctx.storage.read_bytes(submission.file_key)
    return acknowledge_upload(ctx, submission=submission, phase=submission.phase, data=data, fresh=False)


def backoff(ctx: ServiceContext, attempts: int) -> timedelta:
    """Return the wait after the given number of failed attempts: retry_seconds doubling, at most an hour."""
    return min(timedelta(seconds=ctx.settings.retry_seconds * 2 ** min(attempts - 1, 20)), BACKOFF_CAP)


def retry_later(ctx: ServiceContext, *, submission_id: int, claimed: datetime, detail: str) -> None:
    """Put a claimed submission whose attempt failed on the platform's side back in the queue, with backoff."""
    try:
        quick_retries(lambda: _retry_or_give_up(ctx, submission_id, held_by(claimed), detail=detail),
                      session=ctx.session, what=f"postponing submission {submission_id}")
    except TRANSIENT:
        rollback_quietly(ctx.session)
        log.error("submission %s could not be postponed; it stays 'scoring' until the sweep takes it back",
                  submission_id, exc_info=True)


def wait_for_labels(ctx: ServiceContext, *, submission_id: int, claimed: datetime, detail: str) -> None:
    """Queue a claimed submission again, its charge refunded now, to be scored once its label file is intact.

    A label file failing its integrity check is the platform's fault and lasts until an
    organizer restores it, so the attempt is not counted (the submission never gives up
    on it) and is tried again every LABEL_RETRY, or at once with ``flask requeue``.
    """
    submission = ctx.session.get(Submission, submission_id, populate_existing=True)
    if submission is None:
        return
    refunded = " (charge refunded)" if submission.quota_day is not None else ""
    if claim(ctx, submission_id, held_by(claimed), status="queued", scoring_started_at=None,
             next_attempt_at=utcnow() + LABEL_RETRY,
             failure_detail=f"{LABELS_BROKEN}: not scored{refunded}, waiting for the file to be restored; "
                            f"retried every {LABEL_RETRY.seconds // 60} minutes, or now with flask requeue. {detail}"):
        quota.refund(ctx, submission=submission)
    ctx.session.commit()
    ctx.session.expire(submission)


def sweep(ctx: ServiceContext, *, now: datetime | None = None) -> list[int]:
    """Dispatch what is due again and settle abandoned uploads; return the ids dispatched."""
    now = now or utcnow()
    stale = now - timedelta(seconds=ctx.settings.stale_seconds)
    forgotten = now - timedelta(seconds=WAKE_AFTER_LEASES * ctx.settings.lease_seconds)
    due = or_(Submission.next_attempt_at <= now, and_(Submission.next_attempt_at.is_(None),
                                                      Submission.updated_at <= forgotten))
    dispatched = _pick_up(ctx, now=now, stale=stale, due=due)
    announce_phases(ctx, now=now)
    return dispatched


def announce_phases(ctx: ServiceContext, *, now: datetime | None = None) -> list[int]:
    """Send phase.opened / phase.closed once for phases whose dates changed their status; refresh their boards."""
    try:
        changed = phase_notices.announce_due(ctx, status_of=status_at, now=now)
    except Exception:  # the next sweep tries again: nothing was claimed that was not committed with its event
        rollback_quietly(ctx.session)
        log.exception("announcing phases opened or closed by their dates failed; the next sweep tries again")
        return []
    for phase_id in changed:
        ctx.board_changed(phase_id=phase_id)  # as an organizer's open or close does
    return changed


def requeue_unfinished(ctx: ServiceContext) -> list[int]:
    """Dispatch every unfinished submission now, whatever its backoff (release step, operator)."""
    now = utcnow()
    return _pick_up(ctx, now=now, stale=now, due=Submission.status == "queued")


def _pick_up(ctx: ServiceContext, *, now: datetime, stale: datetime, due: ColumnElement[bool]) -> list[int]:
    """Settle, take back and queue again what is abandoned, then claim and dispatch the due queued rows."""
    _settle_unacknowledged(ctx, before=now - timedelta(seconds=ctx.settings.stale_seconds))
    _take_back_stale(ctx, now=now, stale=stale)
    _queue_old_platform_failures(ctx)
    dispatched = []
    for submission_id in _ids(ctx, and_(Submission.status == "queued", due)):
        # Ready for a scorer (submissions/queue.py) and, touched, not woken again for three leases.
        if claim(ctx, submission_id, and_(Submission.status == "queued", due), next_attempt_at=None,
                 updated_at=now):
            dispatched.append(submission_id)
        ctx.session.commit()
    ctx.dispatch(dispatched)
    return dispatched


def _settle_unacknowledged(ctx: ServiceContext, *, before: datetime) -> None:
    """Mark uploads stored but never acknowledged before ``before`` as failed, uncharged and unscored."""
    held = and_(Submission.status == "received", Submission.created_at <= before)
    errors = {"errors": [{"line": None, "id": None, "message": NOT_ACKNOWLEDGED_MESSAGE}], "error_count": 1}
    for submission_id in _ids(ctx, held):
        if claim(ctx, submission_id, held, status="failed", failure_detail=NOT_ACKNOWLEDGED,
                 validation_errors=errors):
            log.warning("submission %s was stored but never acknowledged; settled as not charged", submission_id)
        ctx.session.commit()


def take_back_lapsed(ctx: ServiceContext) -> None:
    """Queue again scoring runs whose lease lapsed, now (what the sweep does first; a draining scorer calls it too).

    A scorer draining a long queue (scoring_runs.wake_scorer) calls it once per lease, so a
    run lost with a killed worker is taken back while the backlog is scored, not when the
    sweep's next wake-up gets through the queue behind it.
    """
    now = utcnow()
    _take_back_stale(ctx, now=now, stale=now - timedelta(seconds=ctx.settings.stale_seconds))


def _take_back_stale(ctx: ServiceContext, *, now: datetime, stale: datetime) -> None:
    """Queue again scoring runs whose lease lapsed (their scorer is gone): due at once the first time."""
    unleased = and_(Submission.lease_until.is_(None),
                    or_(Submission.scoring_started_at < stale,
                        and_(Submission.scoring_started_at.is_(None), Submission.updated_at < stale)))
    held = and_(Submission.status == "scoring", or_(Submission.lease_until < now, unleased))
    for submission_id in _ids(ctx, held):
        log.warning("submission %s: its scoring run stopped renewing its lease; it is queued again", submission_id)
        _retry_or_give_up(ctx, submission_id, held, detail="the scoring run stopped without a result "
                                                           "(its worker was killed or lost)", lapsed=True, now=now)


def _queue_old_platform_failures(ctx: ServiceContext) -> None:
    """Queue again submissions that failed on the platform's side before such failures were retried."""
    no_errors = or_(Submission.validation_errors.is_(None), cast(Submission.validation_errors, String) == "null")
    held = and_(Submission.status == "failed", Submission.attempts == 0, Submission.failure_detail.is_not(None),
                no_errors)
    for submission_id in _ids(ctx, held):
        # Their quota was refunded when they failed; they are scored without a new charge.
        if claim(ctx, submission_id, held, status="queued", attempts=1, next_attempt_at=utcnow()):
            log.warning("submission %s, a platform failure from before retries, is queued again", submission_id)
        ctx.session.commit()


def _retry_or_give_up(ctx: ServiceContext, submission_id: int, held: ColumnElement[bool], *, detail: str,
                      lapsed: bool = False, now: datetime | None = None) -> None:
    """Queue the submission again after a failed attempt, or end it failed and refunded after MAX_ATTEMPTS.

    A lapsed lease (its scorer was killed) is due again at once the first time, then backs
    off like any failure: a file that kills every scorer does not keep them busy.
    """
    submission = ctx.session.get(Submission, submission_id, populate_existing=True)
    if submission is None:
        return
    attempts = submission.attempts + 1
    values: dict[str, Any] = {"attempts": Submission.attempts + 1, "scoring_started_at": None, "lease_until": None}
    if attempts >= MAX_ATTEMPTS:
        values.update(status="failed", next_attempt_at=None,
                      failure_detail=f"gave up after {attempts} attempts; the last failed with: {detail}")
    else:
        delay = timedelta(0) if lapsed and attempts == 1 else backoff(ctx, attempts - 1 if lapsed else attempts)
        values.update(status="queued", next_attempt_at=(now or utcnow()) + delay,
                      failure_detail=f"attempt {attempts} failed (retried later): {detail}")
    if claim(ctx, submission_id, held, **values) and values["status"] == "failed":
        quota.refund(ctx, submission=submission)
        log.error("submission %s failed on the platform's side %s times; giving up (quota refunded)",
                  submission_id, attempts)
    ctx.session.commit()
    ctx.session.expire(submission)


def _ids(ctx: ServiceContext, condition: ColumnElement[bool]) -> list[int]:
    """Return the ids of up to BATCH submissions matching condition, oldest first."""
    return list(ctx.session.scalars(select(Submission.id).where(condition).order_by(Submission.id).limit(BATCH)))
