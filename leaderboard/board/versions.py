"""The materialized board of a phase: announced changes, refreshes that never lose one, and the rows' version.

Protocol (docs/RANKING.md). A writer commits its change, then ``announce`` adds one to
the phase's ``boards.wanted`` in a short transaction of its own (retried when the database
is briefly busy: a lost announcement would keep a scored entry off the board), then
``refresh`` runs in a fresh session: it takes the phase's refresh turn (PostgreSQL: a
transaction-level advisory lock; SQLite: a per-phase lock of its own, board/refresh_lock.py,
so the database's write lock is held only for short writes, and by a full rebuild), reads
``wanted``, and unless ``built`` already covers it rebuilds the rows from the data
committed so far, writes only the rows that differ, sets ``built`` to what it read
and, when rows changed, a new ``version`` (random: the per-process caches key on it, and
a random value never repeats one of another database or of a re-created phase id, as a
counter would). Any change announced before a refresh took
the turn is in what that refresh read, so concurrent writers coalesce: one waits for
the other's refresh and then finds its own change already built. A writer that returned
has refreshed (or handed the refresh to its process's refresher), so readers leave
refreshing to writers: within ``REFRESH_GRACE`` of the last refresh a reader shows the
built rows. A reader seeing ``built < wanted`` past the grace (a writer that died between
its commit and its refresh, or a refresh that failed) refreshes first, unless a refresh is
under way (then it shows the rows as they are, without waiting). Both boards (while open, after close) are
built every time, so a phase that closes by the clock shows its after-close board at once,
without any write.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import case, delete, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from leaderboard.board.refresh import apply_plan, rebuild
from leaderboard.board.refresh_lock import Writes, process_turn, sqlite_turn
from leaderboard.models import Board, BoardDirty, Phase
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.sessions import quick_retries

log = logging.getLogger(__name__)

LOCK_CLASS = 0x7462  # "tb": the advisory-lock class of board refreshes (PostgreSQL)
REFRESH_GRACE = timedelta(seconds=10)
"""How long after a board's last refresh its readers show its built rows while changes are pending.

Whoever announces a change refreshes the board (a Celery worker after scoring, embedded
mode's refresher thread, an organizer's request), so under a stream of scores readers
show the last version and leave refreshing to them: a reader that refreshed would wait
for it, and every cached answer would be bypassed while anything is pending. A board
whose last refresh is older than this with changes pending (its refresh failed, or its
announcer died) is refreshed by its next reader, as before.
"""


def announce(ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> int:
    """Record, in a transaction of its own, that a change to the phase's board was committed; return ``wanted``.

    ``submission_ids`` names the submissions whose entries changed (a refresh then rebuilds
    only their owners' rows); None means anything may have changed (a full rebuild).
    """
    ids: list[int | None] = [None] if submission_ids is None else list(dict.fromkeys(submission_ids))
    with ctx.runtime.sessions() as session:
        return quick_retries(lambda: _announce(session, phase_id, ids), session=session,
                             what=f"announcing a change to the board of phase {phase_id}")


def _announce(session: Session, phase_id: int, ids: list[int | None]) -> int:
    """Add one to the phase's wanted and mark the changed submissions, committed; return the new wanted."""
    _ensure_row(session, phase_id)
    session.execute(update(Board).where(Board.phase_id == phase_id).values(wanted=Board.wanted + 1))
    if ids:
        session.execute(insert(BoardDirty), [{"phase_id": phase_id, "submission_id": i} for i in ids])
    wanted = session.scalar(select(Board.wanted).where(Board.phase_id == phase_id))
    session.commit()
    return int(wanted or 0)


def refresh(ctx: ServiceContext, *, phase_id: int, covering: int | None = None, wait: bool = True) -> bool:
    """Rebuild the phase's board unless it already reflects ``covering`` (default: every announced change).

    Runs in a session of its own, in the phase's refresh turn, and returns whether the rows
    changed. Only the entries of announced submissions are rebuilt, unless a change asked
    for everything. Writers wait for the turn: whoever had it before them may have read
    their change already, and then they find it built (a burst of changes coalesces into
    few refreshes). A reader passes ``wait=False``: while another refresh runs, it returns
    False at once and reads the rows as they are (that refresh's writer has not returned).
    """
    engine = ctx.runtime.engine
    if engine.dialect.name != "sqlite":  # one refresh session per process, then the advisory lock
        with process_turn(engine.url.render_as_string(), phase_id, wait=wait) as mine:
            return mine and _refresh_in_turn(ctx, phase_id=phase_id, covering=covering, wait=wait, sqlite=False)
    with sqlite_turn(engine.url.database, phase_id, wait=wait) as mine:
        return mine and _refresh_in_turn(ctx, phase_id=phase_id, covering=covering, wait=wait, sqlite=True)


def _refresh_in_turn(ctx: ServiceContext, *, phase_id: int, covering: int | None, wait: bool, sqlite: bool) -> bool:
    """Refresh the phase's board (SQLite: its turn held, reading and writing in short transactions)."""
    with ctx.runtime.sessions() as session:
        if not sqlite and not _lock(session, phase_id, wait=wait):
            session.rollback()
            return False
        writes = Writes(session, short=sqlite, take_lock=partial(_lock, session, phase_id, wait=True))
        if session.get(Board, phase_id, populate_existing=True) is None:
            writes.write(lambda: _ensure_row(session, phase_id))
        board = session.get(Board, phase_id, populate_existing=True)
        phase = session.get(Phase, phase_id)
        if board is None or phase is None:  # the phase was deleted meanwhile
            session.rollback()
            return False
        target, version = board.wanted, board.version
        if board.built >= (target if covering is None else covering) and board.signature:
            session.rollback()
            return False
        marks = session.execute(select(BoardDirty.id, BoardDirty.submission_id)
                                .where(BoardDirty.phase_id == phase_id)).all()
        # no mark at all: a change announced without saying what (or already built by a refresh that read
        # its mark before its count): rebuild everything rather than risk missing it
        everything = not marks or any(sub_id is None for _, sub_id in marks) or not board.signature
        if everything:
            writes.hold()
        dirty = None if everything else {int(sub_id) for _, sub_id in marks if sub_id is not None}
        plan = rebuild(ctx.runtime.context(session), phase=phase, board=board, dirty=dirty, writes=writes)

        def finish() -> bool:
            changed = apply_plan(session, plan)
            for start in range(0, len(marks), 500):
                session.execute(delete(BoardDirty).where(BoardDirty.id.in_([m[0] for m in marks[start:start + 500]])))
            session.execute(update(Board).where(Board.phase_id == phase_id).values(
                built=case((Board.built < target, target), else_=Board.built),
                version=_new_version(version) if changed else version, refreshed_at=utcnow()))
            return changed

        changed = writes.write(finish)
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


def overdue(built: int, wanted: int, refreshed_at: datetime | None, *, now: datetime | None = None) -> bool:
    """Return whether a board's pending changes are for its reader to build (pending past REFRESH_GRACE)."""
    if built >= wanted:
        return False
    return refreshed_at is None or refreshed_at <= (now or utcnow()) - REFRESH_GRACE


def fresh_version(ctx: ServiceContext, *, phase_id: int, board: Board | None) -> int:
    """Return the version to show: refresh first when changes are overdue (``overdue``; a failure is logged).

    After a refresh the caller's transaction is ended, so it reads the new rows (SQLite
    keeps one snapshot per transaction).
    """
    if board is not None and board.signature and not overdue(board.built, board.wanted, board.refreshed_at):
        return board.version
    try:
        refresh(ctx, phase_id=phase_id, wait=False)  # a refresh under way: read the rows as they are
    except Exception:  # the last good rows are still there: show them rather than nothing
        log.exception("refreshing the board of phase %s failed; showing its last built rows", phase_id)
    ctx.session.commit()
    again = state(ctx, phase_id=phase_id)
    return 0 if again is None else again.version


def _lock(session: Session, phase_id: int, *, wait: bool) -> bool:
    """Take the phase's refresh lock until the end of the transaction (its first statement); False if busy, not wait.

    PostgreSQL: the advisory lock (other writers go on meanwhile). SQLite: the database's
    write lock, by a write first, held by a full rebuild only (board/refresh_lock.py).
    """
    if session.get_bind().dialect.name == "postgresql":
        if not wait:
            return bool(session.scalar(text("SELECT pg_try_advisory_xact_lock(:cls, :key)"),
                                       {"cls": LOCK_CLASS, "key": phase_id}))
        session.execute(text("SELECT pg_advisory_xact_lock(:cls, :key)"), {"cls": LOCK_CLASS, "key": phase_id})
        return True
    session.execute(update(Board).where(Board.phase_id == phase_id).values(refreshed_at=Board.refreshed_at))
    return True


def _ensure_row(session: Session, phase_id: int) -> None:
    """Insert the phase's boards row unless it exists (a concurrent insert is not an error)."""
    dialect = session.get_bind().dialect.name
    make = postgresql.insert if dialect == "postgresql" else sqlite.insert
    values = {"phase_id": phase_id, "wanted": 0, "built": 0, "version": 0, "signature": ""}
    session.execute(make(Board).values(**values).on_conflict_do_nothing(index_elements=["phase_id"]))
