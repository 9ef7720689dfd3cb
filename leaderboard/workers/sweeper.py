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
from typing import Any

from leaderboard.platform import Runtime
from leaderboard.submissions import recovery
from leaderboard.workers.periodic import PeriodicThread

log = logging.getLogger(__name__)


class Sweeper(PeriodicThread):
    """One sweeping daemon thread per process, started on demand."""

    name = "tailboard-sweep"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime

    def interval(self) -> float:
        """Return the seconds between two rounds."""
        return self.runtime.settings.sweep_seconds

    def run_once(self) -> list[int]:
        """Sweep once in a fresh session; return the ids dispatched (none when the sweep failed)."""
        try:
            with self.runtime.sessions() as session:
                return recovery.sweep(self.runtime.context(session))
        except Exception:  # the database or storage may be away: the next round tries again
            log.exception("the sweep failed; it runs again in %g s", self.runtime.settings.sweep_seconds)
            return []


def init_app(app: Any, runtime: Runtime) -> None:
    """Sweep from each serving process in embedded mode, starting with its first request."""
    settings = runtime.settings
    if settings.scoring_mode != "inline" or settings.sweep_seconds <= 0 or settings.testing:
        return
    sweeper = Sweeper(runtime)
    app.extensions["tailboard_sweeper"] = sweeper
    app.before_request(sweeper.start)
