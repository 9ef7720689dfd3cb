"""The embedded-mode sweep: a daemon thread in each serving process runs recovery.sweep every sweep_seconds.

In celery mode, Celery beat schedules the same sweep on a worker (leaderboard.workers.celery_app).
The thread starts with the first request a process serves, not in ``create_app``:
``flask --app app ...`` commands and a preloading master never run one, and every
forked worker starts its own. Several processes sweeping at once is safe: each
pick-up is a conditional UPDATE (submissions/recovery.py). Off in tests (``testing``)
and with ``TAILBOARD_SWEEP_SECONDS=0``.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from leaderboard.platform import Runtime
from leaderboard.submissions import recovery

log = logging.getLogger(__name__)


class Sweeper:
    """One sweeping daemon thread per process, started on demand."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        """Start this process's sweeping thread unless it runs already."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._stop = threading.Event()
            threading.Thread(target=self._loop, args=(self._stop,), name="tailboard-sweep", daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after its current round."""
        self._stop.set()

    def run_once(self) -> list[int]:
        """Sweep once in a fresh session; return the ids dispatched (none when the sweep failed)."""
        try:
            with self.runtime.sessions() as session:
                return recovery.sweep(self.runtime.context(session))
        except Exception:  # the database or storage may be away: the next round tries again
            log.exception("the sweep failed; it runs again in %g s", self.runtime.settings.sweep_seconds)
            return []

    def _loop(self, stop: threading.Event) -> None:
        while not stop.wait(self.runtime.settings.sweep_seconds):
            self.run_once()


def init_app(app: Any, runtime: Runtime) -> None:
    """Sweep from each serving process in embedded mode, starting with its first request."""
    settings = runtime.settings
    if settings.scoring_mode != "inline" or settings.sweep_seconds <= 0 or settings.testing:
        return
    sweeper = Sweeper(runtime)
    app.extensions["tailboard_sweeper"] = sweeper
    app.before_request(sweeper.start)
