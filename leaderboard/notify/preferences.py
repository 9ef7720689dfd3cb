"""A user's mail choices: submission mails (scored or failed) are on unless the user turned them off."""

from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.models import NotifyPreference
from leaderboard.platform.db import utcnow


def submission_mail_on(session: Session, *, user_id: int) -> bool:
    """Return whether the user wants a mail when one of their submissions is scored or fails (default: yes)."""
    row = session.get(NotifyPreference, user_id)
    return True if row is None else bool(row.submission_mail)


def set_submission_mail(session: Session, *, user_id: int, on: bool) -> None:
    """Turn the user's submission mails on or off and commit."""
    row = session.get(NotifyPreference, user_id)
    if row is None:
        row = NotifyPreference(user_id=user_id)
        session.add(row)
    row.submission_mail, row.updated_at = on, utcnow()
    session.commit()
