"""Embedded mode's board refresher: a daemon thread per serving process brings boards up to date after scores.

The embedded scorer (workers/scorer.py) announces each score to its phase's board at once
(``board.changes.announce_change``: durable, so a crash loses no change) and hands the
refresh to this thread instead of waiting for it, so scoring goes on at its own pace while a
board refresh runs. The thread refreshes each phase named since its last round once,
covering every change announced before it read the board: a stream of scores becomes one
refresh per refresh time, not one per score. Refreshes of other processes and of this one
take turns per phase (board/versions.py), and readers never wait for one under way.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

from leaderboard.board.changes import announce_change, bring_up_to_date
from leaderboard.platform import Runtime, ServiceContext

log = logging.getLogger(__name__)


class BoardRefresher:
    """One refreshing daemon thread per process; its ``board_changed`` is a runtime's BoardChangedFunction."""

    name = "tailboard-board-refresh"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._pending: dict[int, int] = {}  # phase id -> the announced count its refresh must cover
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.rounds = 0

    def board_changed(self, ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> None:
        """Announce a committed change now; have this process's thread refresh the board soon."""
        wanted = announce_change(ctx, phase_id=phase_id, submission_ids=submission_ids)
        with self._lock:
            self._pending[phase_id] = max(self._pending.get(phase_id, 0), wanted)
        self.start()
        self._wake.set()

    def start(self) -> None:
        """Start this process's refresher thread unless it runs already."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._wake, self._stop = threading.Event(), threading.Event()
            threading.Thread(target=self._loop, args=(self._wake, self._stop), name=self.name, daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after its current round."""
        self._stop.set()
        self._wake.set()

    def run_once(self) -> list[int]:
        """Refresh every phase named since the last round, once each; return their ids."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for phase_id, covering in sorted(pending.items()):
            try:
                with self.runtime.sessions() as session:
                    bring_up_to_date(self.runtime.context(session), phase_id=phase_id, covering=covering)
            except Exception:  # announced: a reader, or the next round, refreshes it
                log.exception("bringing the board of phase %s up to date failed", phase_id)
        self.rounds += 1
        return sorted(pending)

    def _loop(self, wake: threading.Event, stop: threading.Event) -> None:
        while not stop.is_set():
            wake.wait()
            wake.clear()  # cleared before the round: a change announced during it wakes another
            if not stop.is_set():
                self.run_once()
