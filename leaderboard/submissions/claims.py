"""A submission's status changes, each one a conditional UPDATE.

``received`` (stored, not answered yet) -> ``queued`` (valid, charged, answered 202) ->
``scoring`` -> ``scored``, or ``failed``. Every change is ``claim``: an UPDATE that applies
only while the row is still in the state the caller saw, so two requests, two sweepers or
a sweeper and a scoring run never both act on one submission.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, update

from leaderboard.models import Submission
from leaderboard.platform import ServiceContext

NOT_ACKNOWLEDGED = "not acknowledged: the upload stopped before it was accepted; not charged, not scored"


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
