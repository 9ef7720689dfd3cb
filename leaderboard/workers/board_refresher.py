"""Embedded mode's board refresher: a daemon thread per serving process brings boards up to date after scores.

The embedded scorer (workers/scorer.py) announces each score to its phase's board at once
(``board.changes.announce_change``: durable, so a crash loses no change) and hands the
refresh to this thread instead of waiting for it, so scoring goes on at its own pace while a
board refresh runs. The thread refreshes each phase named since its last round once,
covering every change announced before it read the board, and at most once per
``PACE_SECONDS`` per phase across processes: a stream of scores becomes one refresh a
second, not one per score, and refreshing leaves the readers most of the CPU. Refreshes
of other processes and of this one take turns per phase (board/versions.py), and readers never wait for one under way.
An announcement that fails (the database busy or its connections all taken) is kept and
made again by the thread until it goes through: the score is committed, and an
unannounced score would never reach the board.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from leaderboard.board.changes import announce_change, bring_up_to_date
from leaderboard.models import Board
from leaderboard.platform import Runtime, ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.workers.periodic import OncePerProcess

log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0
"""Pause before a failed announcement is made again."""
PACE_SECONDS = 1.0
"""The least time between two refreshes of one phase's board by refreshers, counted from its last refresh in any
process (``Board.refreshed_at``): under a stream of scores each refresh covers the scores of a second, and
refreshing (some 0.2-0.3 s at 2,000 submissions) takes a bounded share of the CPU the readers need."""


class BoardRefresher:
    """One refreshing daemon thread per process; its ``board_changed`` is a runtime's BoardChangedFunction."""

    name = "tailboard-board-refresh"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._lock = threading.Lock()
        self._once = OncePerProcess()
        self._pending: dict[int, int] = {}  # phase id -> the announced count its refresh must cover
        self._unannounced: list[tuple[int, list[int] | None]] = []  # (phase id, submission ids) to announce again
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._delay: float | None = None  # seconds until a phase held back by PACE_SECONDS may be refreshed
        self.rounds = 0

    def board_changed(self, ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> None:
        """Announce a committed change now (or, failing, soon); have this process's thread refresh the board soon."""
        ids = None if submission_ids is None else list(submission_ids)
        try:
            wanted = announce_change(ctx, phase_id=phase_id, submission_ids=ids)
        except SQLAlchemyError:  # committed but not announced: the thread announces it again
            log.warning("announcing a change to the board of phase %s failed; it is announced again in %g s",
                        phase_id, RETRY_SECONDS, exc_info=True)
            with self._lock:
                self._unannounced.append((phase_id, ids))
            wanted = 0
        with self._lock:
            self._pending[phase_id] = max(self._pending.get(phase_id, 0), wanted)
        self.start()
        self._wake.set()

    def start(self) -> None:
        """Start this process's refresher thread unless it runs already."""
        self._once.run(self._start_thread)

    def _start_thread(self) -> None:
        self._wake, self._stop = threading.Event(), threading.Event()
        threading.Thread(target=self._loop, args=(self._wake, self._stop), name=self.name, daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after its current round."""
        self._stop.set()
        self._wake.set()

    def run_once(self) -> list[int]:
        """Announce what failed to be announced, then refresh each phase named since the last round once; return them.

        A phase refreshed less than PACE_SECONDS ago (by any process) waits for a later round.
        """
        self._announce_again()
        with self._lock:
            pending, self._pending = self._pending, {}
        refreshed: list[int] = []
        held: dict[int, int] = {}
        waits: list[float] = []
        for phase_id, covering in sorted(pending.items()):
            wait = self._wait_before(phase_id)
            if wait > 0:
                held[phase_id] = covering
                waits.append(wait)
                continue
            try:
                with self.runtime.sessions() as session:
                    bring_up_to_date(self.runtime.context(session), phase_id=phase_id, covering=covering)
            except Exception:  # announced: the next round, or a reader after the grace, refreshes it
                log.exception("bringing the board of phase %s up to date failed", phase_id)
            refreshed.append(phase_id)
        with self._lock:
            for phase_id, covering in held.items():
                self._pending[phase_id] = max(self._pending.get(phase_id, 0), covering)
        self._delay = min(waits, default=None)
        self.rounds += 1
        return refreshed

    def _wait_before(self, phase_id: int) -> float:
        """Return the seconds until the phase's board may be refreshed again (0: now), from its last refresh."""
        if PACE_SECONDS <= 0:
            return 0.0
        try:
            with self.runtime.sessions() as session:
                last = session.scalar(select(Board.refreshed_at).where(Board.phase_id == phase_id))
        except SQLAlchemyError:  # the refresh will say what is wrong
            return 0.0
        if last is None:
            return 0.0
        return max(0.0, (last + timedelta(seconds=PACE_SECONDS) - utcnow()).total_seconds())

    def _announce_again(self) -> None:
        """Make the failed announcements again; keep those that fail once more for the next round."""
        with self._lock:
            todo, self._unannounced = self._unannounced, []
        for phase_id, ids in todo:
            try:
                with self.runtime.sessions() as session:
                    wanted = announce_change(self.runtime.context(session), phase_id=phase_id, submission_ids=ids)
            except SQLAlchemyError:
                log.warning("announcing a change to the board of phase %s failed again", phase_id, exc_info=True)
                with self._lock:
                    self._unannounced.append((phase_id, ids))
                continue
            with self._lock:
                self._pending[phase_id] = max(self._pending.get(phase_id, 0), wanted)

    def _loop(self, wake: threading.Event, stop: threading.Event) -> None:
        while not stop.is_set():
            waits = [w for w in (RETRY_SECONDS if self._unannounced else None, self._delay) if w is not None]
            wake.wait(min(waits, default=None))
            wake.clear()  # cleared before the round: a change announced during it wakes another
            if not stop.is_set():
                self.run_once()
