"""Whose turn it is to refresh a phase's board, and how a refresh writes without holding SQLite's write lock.

PostgreSQL serializes refreshes with a transaction-level advisory lock (board/versions.py)
and lets everyone else write meanwhile. SQLite has one write lock for the whole file: a
refresh that held it while computing (seconds on a large board under load) made every
upload wait for its commit and some fail with "database is locked". So on SQLite a
refresh takes a per-phase lock of its own instead: a thread lock for the threads of this
process, then an exclusive ``flock`` on ``<database>.board-<phase>.lock`` for the other
processes of the host (a SQLite file is only ever written on one host). Holding it, the
refresh reads in plain read transactions and writes in short ones (``Writes``): no other
refresh writes the phase's cells or rows meanwhile, so what it read of them is still what
is stored when it writes.
"""

from __future__ import annotations

import fcntl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from sqlalchemy.orm import Session

LOCK_TIMEOUT = 120.0
"""Seconds a writer waits for the phase's refresh turn before it gives up (readers then refresh)."""
POLL_SECONDS = 0.02
"""Pause between two tries of another process's lock."""

T = TypeVar("T")
_thread_locks: dict[tuple[str, int], threading.Lock] = {}
_guard = threading.Lock()


class RefreshBusy(TimeoutError):
    """The phase's refresh turn was not free within LOCK_TIMEOUT."""


@contextmanager
def process_turn(database: str, phase_id: int, *, wait: bool) -> Iterator[bool]:
    """Hold this process's turn to refresh a phase's board; yield False at once when busy and not ``wait``.

    One refresh of a phase per process at a time: waiting writers queue here rather than each
    holding a database connection, and readers that find it busy go on without one (on
    PostgreSQL a pool of 15 connections per process ran dry when every reader opened a second
    session to refresh). Raises RefreshBusy when waiting longer than LOCK_TIMEOUT.
    """
    lock = _thread_lock(database, phase_id)
    acquired = lock.acquire(timeout=LOCK_TIMEOUT) if wait else lock.acquire(blocking=False)
    if not acquired:
        if wait:
            raise RefreshBusy(f"the board of phase {phase_id} is being refreshed for over {LOCK_TIMEOUT:g} s")
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


@contextmanager
def sqlite_turn(database: str | None, phase_id: int, *, wait: bool) -> Iterator[bool]:
    """Hold the phase's refresh turn of a SQLite database; yield False at once when busy and not ``wait``.

    Raises RefreshBusy when waiting longer than LOCK_TIMEOUT.
    """
    deadline = time.monotonic() + LOCK_TIMEOUT
    with process_turn(database or ":memory:", phase_id, wait=wait) as mine:
        if not mine:
            yield False
            return
        if not database or database == ":memory:":  # one process: the thread lock is the whole turn
            yield True
            return
        with open(f"{database}.board-{phase_id}.lock", "a+b") as handle:
            if not _flock(handle.fileno(), deadline=deadline if wait else None):
                if wait:
                    raise RefreshBusy(f"the board of phase {phase_id} is being refreshed for over "
                                      f"{LOCK_TIMEOUT:g} s")
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _thread_lock(database: str, phase_id: int) -> threading.Lock:
    """Return this process's lock of a phase's refresh on a database."""
    with _guard:
        return _thread_locks.setdefault((database, phase_id), threading.Lock())


def _flock(fileno: int, *, deadline: float | None) -> bool:
    """Take an exclusive flock, trying until deadline (None: once); return whether it was taken."""
    while True:
        try:
            fcntl.flock(fileno, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if deadline is None or time.monotonic() > deadline:
                return False
            time.sleep(POLL_SECONDS)


class Writes:
    """How a refresh writes: inside its one transaction, or (SQLite) in short transactions of their own.

    In short mode each ``write`` ends the read transaction first, so its first statement
    starts a new transaction with a write: SQLite then waits for its write lock (busy
    timeout) instead of failing at once, as upgrading a stale read snapshot does. ``hold``
    switches to one transaction holding the write lock to the end (a full rebuild).
    """

    def __init__(self, session: Session, *, short: bool, take_lock: Callable[[], object]) -> None:
        self.session = session
        self.short = short
        self.take_lock = take_lock

    def write(self, action: Callable[[], T]) -> T:
        """Run action's writes: at once, or in a short transaction committed before returning."""
        if not self.short:
            return action()
        self.session.commit()
        result = action()
        self.session.commit()
        return result

    def hold(self) -> None:
        """From now on, write in the refresh's transaction, holding the database's write lock to its end."""
        if self.short:
            self.session.commit()
            self.take_lock()
            self.short = False
