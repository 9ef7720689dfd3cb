"""Final selection (docs/ENTRIES.md): a team (or a user without one) picks at most K submissions for the final ranking.

Only while the phase is open and only when the phase sets ``final_selections``. The
count is kept exact under concurrent clicks: the owner's submissions of the phase are
locked first (PostgreSQL), and the flag is set by one UPDATE whose condition counts the
owner's selected rows (SQLite runs it under its single writer lock). Every change ends
with ``board_changed``: the Ranking service reads ``submissions.selected`` after close.
"""

from __future__ import annotations

from sqlalchemy import and_, func, select, true, update

from leaderboard.accounts import get_submission, in_team, phase_status
from leaderboard.entries.rules import ACKNOWLEDGED, final_selections, owner_filter
from leaderboard.models import Submission, User
from leaderboard.platform import Conflict, Forbidden, ServiceContext


def select_submission(ctx: ServiceContext, *, submission_id: int, user: User) -> Submission:
    """Mark a submission of the user's entries as one of its owner's final selections (Conflict past K)."""
    submission = _own_submission(ctx, submission_id=submission_id, user=user)
    limit = final_selections(submission.phase)
    if limit is None:
        raise Conflict("This phase has no final selection: its private ranking uses every submission.")
    _ensure_open(submission)
    if submission.status not in ACKNOWLEDGED:
        raise Conflict("Only a submission that was accepted for scoring can be selected.")
    if submission.moderation is not None:
        raise Conflict("A hidden or disqualified submission cannot be selected.")
    if submission.selected:
        return submission
    mine = and_(Submission.phase_id == submission.phase_id,
                owner_filter(user_id=submission.user_id, team_id=submission.team_id))
    ctx.session.execute(select(Submission.id).where(mine).order_by(Submission.id).with_for_update())
    chosen = select(func.count()).select_from(Submission).where(mine, Submission.selected.is_(True))
    result = ctx.session.execute(
        update(Submission).where(Submission.id == submission.id, chosen.scalar_subquery() < limit)
        .values(selected=true()).execution_options(synchronize_session=False))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        ctx.session.rollback()
        raise Conflict(_full_message(ctx, submission, limit), {"final_selections": limit})
    ctx.session.commit()
    ctx.session.refresh(submission)
    ctx.board_changed(phase_id=submission.phase_id)
    return submission


def unselect_submission(ctx: ServiceContext, *, submission_id: int, user: User) -> Submission:
    """Take a submission out of its owner's final selections (only while the phase is open)."""
    submission = _own_submission(ctx, submission_id=submission_id, user=user)
    _ensure_open(submission)
    if not submission.selected:
        return submission
    submission.selected = False
    ctx.session.commit()
    ctx.board_changed(phase_id=submission.phase_id)
    return submission


def selected_ids(ctx: ServiceContext, *, submission: Submission) -> list[int]:
    """Return the ids of the submissions the owner of this one has selected in its phase."""
    return list(ctx.session.scalars(
        select(Submission.id).where(Submission.phase_id == submission.phase_id, Submission.selected.is_(True),
                                    owner_filter(user_id=submission.user_id, team_id=submission.team_id))
        .order_by(Submission.id)))


def _own_submission(ctx: ServiceContext, *, submission_id: int, user: User) -> Submission:
    """Return a submission of the user's entries (theirs or a teammate's); NotFound or Forbidden otherwise."""
    submission = get_submission(ctx, submission_id=submission_id, viewer=user)
    if submission.is_baseline or not (submission.user_id == user.id or in_team(submission, user)):
        raise Forbidden("Only the participant (or their team) who made a submission can select it.")
    return submission


def _ensure_open(submission: Submission) -> None:
    """Raise Conflict unless the submission's phase is open."""
    if phase_status(submission.phase) != "open":
        raise Conflict("Final selections can change only while the phase is open.")


def _full_message(ctx: ServiceContext, submission: Submission, limit: int) -> str:
    """Return why one more selection is refused, naming the selected submissions."""
    chosen = ", ".join(f"#{i}" for i in selected_ids(ctx, submission=submission))
    who = "your team has" if submission.team_id is not None else "you have"
    return (f"This phase allows {limit} final selection{'s' if limit != 1 else ''}; {who} selected {chosen}. "
            "Unselect one first.")
