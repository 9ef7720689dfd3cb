"""Database session helpers every writer shares: quick in-process retries, a rollback that cannot raise.

``quick_retries`` runs an action again after a short pause when the storage or the
database was briefly away (the last error propagates); ``rollback_quietly`` and
``discard_session`` leave a session usable, or dropped, after its connection died.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from leaderboard.platform.storage.base import StorageError

log = logging.getLogger(__name__)

QUICK_RETRY_DELAYS = (0.2, 1.0)
"""Pauses between the in-process tries of one attempt, before it is postponed."""
TRANSIENT = (StorageError, DBAPIError)
"""Failures worth a quick retry in process: storage or database briefly away."""

T = TypeVar("T")


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
