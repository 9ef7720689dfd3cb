"""The materialized board of a phase: announced changes, refreshes that never lose one, and the rows' version.

Protocol (docs/RANKING.md). A writer commits its change, then ``announce`` adds one to
the phase's ``boards.wanted`` in a short transaction of its own, then ``refresh`` runs in
a fresh session: it takes the phase's refresh lock (PostgreSQL: a transaction-level
advisory lock; SQLite: the database's write lock, taken by the first statement), reads
``wanted``, and unless ``built`` already covers it rebuilds the rows from the data
committed so far, writes only the rows that differ, sets ``built`` to what it read
and, when rows changed, a new ``version`` (random: the per-process caches key on it, and
a random value never repeats one of another database or of a re-created phase id, as a
counter would). Any change announced before a refresh took
the lock is in what that refresh read, so concurrent writers coalesce: one waits for
the other's refresh and then finds its own change already built. A reader seeing
``built < wanted`` (a writer between its commit and its refresh, or a refresh that
failed) refreshes first, so no one reads a board older than a change whose writer has
returned. Both boards (while open, after close) are built every time, so a phase that
closes by the clock shows its after-close board at once, without any write.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from leaderboard.board.refresh import rebuild
from leaderboard.models import Board, BoardDirty, Phase
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow

log = logging.getLogger(__name__)

LOCK_CLASS = 0x7462  # "tb": the advisory-lock class of board refreshes (PostgreSQL)


def announce(ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> int:
    """Record, in a transaction of its own, that a change to the phase's board was committed; return ``wanted``.

    ``submission_ids`` names the submissions whose entries changed (a refresh then rebuilds
    only their owners' rows); None means anything may have changed (a full rebuild).
    """
    ids = [None] if submission_ids is None else list(dict.fromkeys(submission_ids))
    with ctx.runtime.sessions() as session:
        _ensure_row(session, phase_id)
        session.execute(update(Board).where(Board.phase_id == phase_id).values(wanted=Board.wanted + 1))
        if ids:
            session.execute(insert(BoardDirty), [{"phase_id": phase_id, "submission_id": i} for i in ids])
        wanted = session.scalar(select(Board.wanted).where(Board.phase_id == phase_id))
        session.commit()
    return int(wanted or 0)


def refresh(ctx: ServiceContext, *, phase_id: int, covering: int | None = None) -> bool:
    """Rebuild the phase's board unless it already reflects ``covering`` (default: every announced change).

    Runs in a session of its own and returns whether the rows changed. Only the entries of
    announced submissions are rebuilt, unless a change asked for everything.
    """
    with ctx.runtime.sessions() as session:
        _lock(session, phase_id)
        _ensure_row(session, phase_id)
        board = session.get(Board, phase_id, populate_existing=True)
        phase = session.get(Phase, phase_id)
        if board is None or phase is None:  # the phase was deleted meanwhile
            session.rollback()
            return False
        target = board.wanted
        if board.built >= (target if covering is None else covering) and board.signature:
            session.rollback()
            return False
        marks = session.execute(select(BoardDirty.id, BoardDirty.submission_id)
                                .where(BoardDirty.phase_id == phase_id)).all()
        # no mark at all: a change announced without saying what (or already built by a refresh that read
        # its mark before its count): rebuild everything rather than risk missing it
        everything = not marks or any(sub_id is None for _, sub_id in marks) or not board.signature
        dirty = None if everything else {int(sub_id) for _, sub_id in marks if sub_id is not None}
        changed = rebuild(ctx.runtime.context(session), phase=phase, board=board, dirty=dirty)
        for start in range(0, len(marks), 500):
            session.execute(delete(BoardDirty).where(BoardDirty.id.in_([m[0] for m in marks[start:start + 500]])))
        board.built = max(board.built, target)
        board.version = _new_version(board.version) if changed else board.version
        board.refreshed_at = utcnow()
        session.commit()
        return changed


def _new_version(old: int) -> int:
    """Return a random positive 31-bit version different from old."""
    while True:
        new = secrets.randbelow(2**31 - 1) + 1
        if new != old:
            return new


def rebuild_from_scratch(ctx: ServiceContext, *, phase_id: int) -> bool:
    """Recompute a phase's cells and rows from its scores (after an upgrade, or a change of what cells hold)."""
    with ctx.runtime.sessions() as session:
        _ensure_row(session, phase_id)
        session.execute(update(Board).where(Board.phase_id == phase_id).values(signature=""))
        session.commit()
    announce(ctx, phase_id=phase_id)
    return refresh(ctx, phase_id=phase_id)


def state(ctx: ServiceContext, *, phase_id: int) -> Board | None:
    """Return where the phase's board stands (None before its first refresh)."""
    return ctx.session.get(Board, phase_id, populate_existing=True)


def fresh_version(ctx: ServiceContext, *, phase_id: int, board: Board | None) -> int:
    """Return the version of an up-to-date board: refresh first when changes are pending (a failure is logged).

    After a refresh the caller's transaction is ended, so it reads the new rows (SQLite
    keeps one snapshot per transaction).
    """
    if board is not None and board.built >= board.wanted and board.signature:
        return board.version
    try:
        refresh(ctx, phase_id=phase_id)
    except Exception:  # the last good rows are still there: show them rather than nothing
        log.exception("refreshing the board of phase %s failed; showing its last built rows", phase_id)
    ctx.session.commit()
    again = state(ctx, phase_id=phase_id)
    return 0 if again is None else again.version


def _lock(session: Session, phase_id: int) -> None:
    """Take the phase's refresh lock until the end of the transaction (the session's first statement)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:cls, :key)"), {"cls": LOCK_CLASS, "key": phase_id})
    else:  # SQLite: a write first, so the transaction holds the write lock before it reads anything
        session.execute(update(Board).where(Board.phase_id == phase_id).values(refreshed_at=Board.refreshed_at))


def _ensure_row(session: Session, phase_id: int) -> None:
    """Insert the phase's boards row unless it exists (a concurrent insert is not an error)."""
    dialect = session.get_bind().dialect.name
    make = postgresql.insert if dialect == "postgresql" else sqlite.insert
    values = {"phase_id": phase_id, "wanted": 0, "built": 0, "version": 0, "signature": ""}
    session.execute(make(Board).values(**values).on_conflict_do_nothing(index_elements=["phase_id"]))
