"""Moderation (docs/ORGANIZING.md): a competition's managers hide, disqualify or restore a submission.

A hidden or disqualified submission leaves the board at once (``board_changed``); its
owner (and teammates) still see it, with its state and the reason, on its page. The
quota it was charged is kept. Every change is written to the audit log. Managers may
also download any submission's file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from leaderboard.accounts import Actor, audit, can_manage
from leaderboard.models import Submission, User
from leaderboard.platform import Conflict, InvalidInput, NotFound, ServiceContext
from leaderboard.platform.db import utcnow

STATES = ("hidden", "disqualified")
MAX_REASON = 1000


@dataclass(frozen=True)
class ModerationState:
    """What a submission's owner and managers are told about its moderation."""

    state: str  # "visible", "hidden" or "disqualified"
    reason: str | None
    at: datetime | None


def moderate(ctx: ServiceContext, *, submission_id: int, state: str | None, actor: Actor,
             reason: str | None = None) -> Submission:
    """Hide (state "hidden"), disqualify (with a reason) or restore (None) a submission; log it; update the board."""
    submission = managed_submission(ctx, submission_id=submission_id, actor=actor)
    reason = " ".join((reason or "").split())[:MAX_REASON] or None
    if state not in (None, *STATES):
        raise InvalidInput(f"A moderation state is one of {', '.join(STATES)} (or none to restore).")
    if state == "disqualified" and not reason:
        raise InvalidInput("Say why the submission is disqualified: its owner reads the reason.")
    if submission.is_baseline:
        raise Conflict("Baselines are not moderated; they are not ranked.")
    if state is None and submission.moderation is None:
        raise Conflict("This submission is not hidden or disqualified.")
    submission.moderation, submission.moderation_reason = state, reason if state else None
    submission.moderated_at = utcnow()
    submission.moderated_by_id = actor.id if isinstance(actor, User) else None
    verb = {"hidden": "hid", "disqualified": "disqualified", None: "restored"}[state]
    audit.record(ctx, actor=actor, competition=submission.phase.competition, target=f"submission {submission.id}",
                 summary=f"{verb} the submission of {submission.user.display_name} to “{submission.phase.name}”"
                         + (f": {reason}" if reason and state else ""))
    ctx.board_changed(phase_id=submission.phase_id)
    return submission


def moderation_state(submission: Submission) -> ModerationState:
    """Return a submission's moderation as its owner and managers see it."""
    if submission.moderation is None:
        return ModerationState(state="visible", reason=None, at=None)
    return ModerationState(state=submission.moderation, reason=submission.moderation_reason,
                           at=submission.moderated_at)


def managed_submission(ctx: ServiceContext, *, submission_id: int, actor: Actor) -> Submission:
    """Return a submission if actor manages its competition, else NotFound (ids are not confirmed to others)."""
    submission = ctx.session.get(Submission, submission_id)
    if submission is None or not can_manage(submission.phase.competition, actor):
        raise NotFound(f"No submission {submission_id}.")
    return submission


def submission_file(ctx: ServiceContext, *, submission_id: int, actor: Actor) -> tuple[str, bytes]:
    """Return (download name, bytes) of any submission's file to a manager of its competition."""
    submission = managed_submission(ctx, submission_id=submission_id, actor=actor)
    return f"submission-{submission.id}-{submission.filename}", ctx.storage.read_bytes(submission.file_key)
