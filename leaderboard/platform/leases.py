"""Leases: a scoring run or a job proves it is alive by renewing its row every few seconds.

A run that claims work writes ``lease_until`` (a submission) or ``heartbeat_at`` (a job)
and keeps it fresh from a daemon thread while it works: ``renewing`` runs ``renew`` in a
fresh session every ``lease_seconds / 4`` until the block ends. A run killed with -9
stops renewing, so its lease lapses within ``lease_seconds`` and the sweep takes the
work back (docs/RUNNING.md#leases). ``renew`` is a conditional UPDATE on the run's own
claim: once it reports the claim lost (taken back, or finished), renewing stops.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from leaderboard.platform.db import utcnow

log = logging.getLogger(__name__)

RENEWALS_PER_LEASE = 4
"""How many times a lease is renewed within its length: three renewals may fail before it lapses."""

MIN_INTERVAL = 0.05
"""The shortest pause between renewals, whatever the lease."""

Renew = Callable[[Session, datetime], bool]
"""Extend the lease to the given time in the session (and commit); return whether the run still holds it."""


def lease_end(lease_seconds: float, *, now: datetime | None = None) -> datetime:
    """Return when a lease taken or renewed now ends."""
    return (now or utcnow()) + timedelta(seconds=lease_seconds)


@contextmanager
def renewing(sessions: sessionmaker[Session], renew: Renew, *, lease_seconds: float, what: str) -> Iterator[None]:
    """Keep a lease renewed from a daemon thread while the block runs."""
    stop = threading.Event()
    thread = threading.Thread(target=_renew_until, args=(sessions, renew, lease_seconds, what, stop),
                              name=f"tailboard-lease-{what}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=lease_seconds)


def _renew_until(sessions: sessionmaker[Session], renew: Renew, lease_seconds: float, what: str,
                 stop: threading.Event) -> None:
    """Renew every lease_seconds / RENEWALS_PER_LEASE until stopped or the claim is lost."""
    while not stop.wait(max(lease_seconds / RENEWALS_PER_LEASE, MIN_INTERVAL)):
        try:
            with sessions() as session:
                if not renew(session, lease_end(lease_seconds)):
                    log.info("%s: the lease is no longer held; renewing stops", what)
                    return
        except Exception:  # the database is briefly away: the next renewal tries again
            log.warning("%s: renewing the lease failed; trying again", what, exc_info=True)
