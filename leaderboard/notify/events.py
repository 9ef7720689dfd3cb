"""The events other packages report, each written as mail and webhook rows in the caller's transaction.

The writers call these before committing their change (scoring_runs.record_score, a
failed scoring run), so the notices commit or roll back with it (a phase opened or
closed is phase_notices': each change told once); ``board_changed`` runs after the
board's own change in a session of its own. Nothing here reads a figure: a mail names
the submission and where to look, a webhook carries ids and a status (docs/NOTIFY.md),
never labels or per-item results.
"""

from __future__ import annotations

import logging

from sqlalchemy import func, select

from leaderboard.models import Competition, Phase, Score, Submission, User
from leaderboard.notify.outbox import send_mail
from leaderboard.notify.preferences import submission_mail_on
from leaderboard.notify.webhooks import enqueue, enqueue_each
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow

log = logging.getLogger(__name__)

SCORED_KIND = "submission_scored"
FAILED_KIND = "submission_failed"


def submission_scored(ctx: ServiceContext, *, submission: Submission, phase: Phase, score: Score) -> None:
    """Queue the owner's mail (first score only, unless turned off) and the submission.scored webhooks."""
    earlier = ctx.session.scalar(select(func.count()).select_from(Score).where(
        Score.submission_id == submission.id, Score.id != score.id)) or 0
    if not earlier and not submission.is_baseline:
        _mail_owner(ctx, submission=submission, phase=phase, kind=SCORED_KIND, what="was scored",
                    next_step="Open it to see what it shows")
    enqueue(ctx.session, competition_id=phase.competition_id, event="submission.scored",
                     phase_id=phase.id, data={"submission_id": submission.id, "phase_id": phase.id,
                                              "status": "scored", "rescored": bool(earlier)})


def submissions_rescored(ctx: ServiceContext, *, phase: Phase, submission_ids: list[int]) -> None:
    """Queue the submission.scored webhooks of re-scored submissions (no mail: each was scored before).

    What ``submission_scored`` does for each of them, with the competition's webhooks read
    once for the batch instead of twice per submission.
    """
    enqueue_each(ctx.session, competition_id=phase.competition_id, event="submission.scored", phase_id=phase.id,
                 data=[{"submission_id": sid, "phase_id": phase.id, "status": "scored", "rescored": True}
                       for sid in submission_ids])


def submission_failed(ctx: ServiceContext, *, submission: Submission) -> None:
    """Queue the owner's mail that their submission could not be scored (unless turned off)."""
    phase = ctx.session.get(Phase, submission.phase_id)
    if phase is None or submission.is_baseline:
        return
    _mail_owner(ctx, submission=submission, phase=phase, kind=FAILED_KIND,
                what="could not be scored: the file is not valid against the phase's labels",
                next_step="Its upload was given back; open it to see the problems")


def phase_changed(ctx: ServiceContext, *, phase: Phase, event: str) -> None:
    """Queue the phase.opened or phase.closed webhooks of the phase's competition, unclaimed (see phase_notices)."""
    enqueue(ctx.session, competition_id=phase.competition_id, event=event, phase_id=phase.id,
                     data={"phase_id": phase.id, "phase": phase.name, "at": f"{utcnow():%Y-%m-%dT%H:%M:%S}Z"})


def board_changed(ctx: ServiceContext, *, phase_id: int) -> None:
    """Write and commit the board.changed webhooks of a phase in a session of its own (one pending per webhook)."""
    with ctx.runtime.sessions() as session:
        competition_id = session.scalar(select(Phase.competition_id).where(Phase.id == phase_id))
        if competition_id is None:
            return
        enqueue(session, competition_id=competition_id, event="board.changed", phase_id=phase_id,
                         data={"phase_id": phase_id}, coalesce=True)
        session.commit()


def _mail_owner(ctx: ServiceContext, *, submission: Submission, phase: Phase, kind: str, what: str,
                next_step: str) -> None:
    """Queue one mail about a submission to its uploader, unless they turned submission mails off."""
    if not submission_mail_on(ctx.session, user_id=submission.user_id):
        return
    user = ctx.session.get(User, submission.user_id)
    competition = ctx.session.get(Competition, phase.competition_id)
    if user is None or competition is None:
        return
    body = (f"Hello {user.display_name},\n\n"
            f"your submission {submission.id} ({submission.filename}) to the phase “{phase.name}” of "
            f"“{competition.title}” {what}.\n\n"
            f"{next_step}: /submissions/{submission.id} on Tailboard.\n\n"
            f"You get this mail because submission mails are on for your account; turn them off on "
            f"your account page (/account).\n")
    send_mail(ctx, to=user.email, subject=f"Submission {submission.id} to “{phase.name}” {what.split(':')[0]}",
              body=body, kind=kind)
