"""Embedded mode's scorer: daemon threads of each serving process score queued submissions off the request path.

Without it an inline dispatch scored in the thread that dispatched: an upload through the
form was answered only once scored and its board refreshed, and an API upload held its web
thread (after the 202) for as long. Here a dispatch only wakes this process's scorer
threads (THREADS; SQLITE_THREADS on SQLite) and returns; each takes the fairest ready submission
(submissions/queue.py), scores it, announces it to the board (its refresh is left to
workers/board_refresher.py), and goes on until none waits. A few scoring slots per process
bound what scoring takes from the web threads, and give it enough turns at the interpreter
to keep up with a rush. Several threads and processes scoring at once is safe: each takes
its submission with a conditional UPDATE. A wake-up lost with a killed process leaves the
submission queued, and the sweep wakes a scorer again (submissions/recovery.py).
The threads start with the first request a process serves; until then (``flask --app app``
commands, which serve none) a dispatch scores in the foreground as before. Not used in tests
(``testing``), where inline scoring finishes before the upload returns, nor in celery mode.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Any

from leaderboard.platform import Runtime
from leaderboard.submissions import scoring_runs
from leaderboard.workers.board_refresher import BoardRefresher
from leaderboard.workers.periodic import OncePerProcess

log = logging.getLogger(__name__)

SQLITE_THREADS = 1
"""Scorer threads per serving process on SQLite: every scoring run commits several times, and
SQLite has one write lock whose waiters are not served in turn; with three per process
(15 writers) uploads waited out the 30 s busy timeout (503) under the deadline rush."""
THREADS = 2
"""Scorer threads per serving process on PostgreSQL (row locks): more turns at the interpreter
for scoring, which a process's many web threads otherwise crowd out during a rush of readers."""
IDLE_SECONDS = 30.0
"""How long an idle thread sleeps before it looks for ready submissions itself (a lost wake-up)."""
RETRY_SECONDS = 1.0
"""How long a thread whose last try failed (the database busy or away) waits before trying again."""


class ScoringWorker:
    """A few scoring daemon threads per process, woken by dispatches; a Dispatcher."""

    name = "tailboard-scorer"

    def __init__(self, runtime: Runtime, *, idle_seconds: float = IDLE_SECONDS, threads: int | None = None) -> None:
        self.runtime = runtime
        sqlite = runtime.engine.dialect.name == "sqlite"
        self.threads = threads if threads is not None else SQLITE_THREADS if sqlite else THREADS
        self._failed = False
        self.refresher = BoardRefresher(runtime)
        self.idle_seconds = idle_seconds
        self._once = OncePerProcess()
        self._wake = threading.Event()
        self._stop = threading.Event()

    def dispatch(self, submission_id: int) -> None:
        """Wake this process's scorer threads; before they started (a command, no request served yet) score now."""
        if not self._once.done:  # ``flask --app app`` commands score in the foreground, as they always did
            self.runtime.score_now(submission_id)
            return
        self._wake.set()

    def start(self) -> None:
        """Start this process's scorer threads unless they run already (a forked worker starts its own)."""
        self._once.run(self._start_threads)

    def _start_threads(self) -> None:
        self._wake, self._stop = threading.Event(), threading.Event()
        for _ in range(self.threads):  # a wake-up releases every idle one: each takes its own submission
            threading.Thread(target=self._loop, args=(self._wake, self._stop), name=self.name, daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after the submission it is scoring, and the board refresher after its round."""
        self._stop.set()
        self._wake.set()
        self.refresher.stop()

    def drain(self) -> list[int]:
        """Score ready submissions in fair order until none waits; return their ids (what a wake-up runs)."""
        scored: list[int] = []
        while not self._stop.is_set():
            picked = self._score_one()
            if picked is None:
                break
            scored.append(picked)
        return scored

    def _score_one(self) -> int | None:
        """Score the fairest ready submission in a fresh session; None when none waits or the database is away."""
        try:
            with self.runtime.sessions() as session:
                picked = scoring_runs.score_next(self.scoring_runtime().context(session))
        except Exception:  # the database may be busy or away: the submission stays queued
            log.exception("the embedded scorer failed to take a submission; it tries again in %g s", RETRY_SECONDS)
            self._failed = True
            return None
        self._failed = False
        return picked

    def scoring_runtime(self) -> Runtime:
        """Return the runtime a scoring run sees: its scores announced now, their boards refreshed by the refresher."""
        return dataclasses.replace(self.runtime, board_changed=self.refresher.board_changed, dispatcher=self)

    def _loop(self, wake: threading.Event, stop: threading.Event) -> None:
        while not stop.is_set():
            wake.wait(RETRY_SECONDS if self._failed else self.idle_seconds)
            wake.clear()  # cleared before draining: a dispatch during the drain wakes another round
            if not stop.is_set():
                self.drain()


def init_app(app: Any, runtime: Runtime) -> None:
    """In embedded mode outside tests, score on threads of each serving process (started by its first request)."""
    settings = runtime.settings
    if settings.scoring_mode != "inline" or settings.testing:
        return
    worker = ScoringWorker(runtime)
    runtime.dispatcher = worker
    app.extensions["tailboard_scorer"] = worker
    app.before_request(worker.start)
