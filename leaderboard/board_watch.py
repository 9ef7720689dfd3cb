"""Whether what an anonymous board read depends on may have changed since a given moment (PostgreSQL).

The board cache (board_cache.py) asks the database for a board's state on every
anonymous read. On PostgreSQL that is two round trips per read, and at 50 concurrent
readers on a small machine they, not the cached answer, set the latency. So each
serving process keeps a ``generation`` that moves whenever that state may have moved:

- a thread LISTENs on ``tailboard_boards``, which triggers on the phases, competitions
  and boards tables NOTIFY on every committed change (migration 0007), whoever wrote it;
- every transaction this process commits moves it too, before the writer's call
  returns, so a process never reads around its own change;
- losing or regaining the listening connection moves it, and while it is down nothing
  is trusted (``listening`` is False): every read asks the database, as on SQLite.

A state read while the generation was g stays valid while it is still g, for at most
``MAX_AGE_SECONDS`` (a bound in case a notification is ever lost). What another process
commits reaches this one when its notification does: measured well under a millisecond
on loopback, and only anonymous readers are served this way (a logged-in reader or an
API token always goes to the app and the database).

Started on a process's first anonymous board read, never in a preloading master.
A database without the triggers (created by ``create_all``, not by the migrations) is
never trusted: the thread sees that and stops.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from typing import Any

import psycopg
from sqlalchemy import Engine, event

log = logging.getLogger(__name__)

CHANNEL = "tailboard_boards"
TRIGGER = "tailboard_board_notify"
APPLICATION_NAME = "tailboard-board-watch"  # how the listening connection shows in pg_stat_activity
MAX_AGE_SECONDS = 5.0
POLL_SECONDS = 1.0  # how often the thread wakes to check its connection (and whether to stop)
RETRY_SECONDS = (0.5, 10.0)  # first and longest wait before reconnecting


class BoardWatch:
    """One process's count of possible changes to board state, fed by LISTEN and by its own commits."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.generation = 0
        self.listening = False
        self._changes = itertools.count(1)
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None
        event.listen(engine, "commit", self.changed)

    def changed(self, *_: Any) -> None:
        """Move the generation: whatever was read before may be out of date."""
        self.generation = next(self._changes)

    def start(self) -> None:
        """Start this process's listening thread unless it runs already."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self.listening = False
            self._stop = threading.Event()
            self.thread = threading.Thread(target=self._loop, args=(self._stop,), name=APPLICATION_NAME, daemon=True)
            self.thread.start()

    def stop(self) -> None:
        """Stop trusting and ask the thread to end."""
        self._stop.set()
        self.listening = False
        self.changed()

    def _conninfo(self) -> str:
        return self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

    def _loop(self, stop: threading.Event) -> None:
        wait = RETRY_SECONDS[0]
        while not stop.is_set():
            try:
                if not self._listen(stop):
                    return
                wait = RETRY_SECONDS[0]
            except psycopg.Error as error:
                log.warning("board watch: lost its PostgreSQL connection (%s); every read asks the database "
                            "until it is back", error)
            finally:
                self.listening = False
                self.changed()
            stop.wait(wait)
            wait = min(2 * wait, RETRY_SECONDS[1])

    def _listen(self, stop: threading.Event) -> bool:
        """Listen until stopped (True) or the connection fails (raises); False when the database has no triggers."""
        with psycopg.connect(self._conninfo(), autocommit=True, application_name=APPLICATION_NAME, connect_timeout=5,
                             keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=2) as connection:
            connection.execute(f"LISTEN {CHANNEL}")
            if connection.execute("SELECT 1 FROM pg_trigger WHERE tgname = %s LIMIT 1", (TRIGGER,)).fetchone() is None:
                log.info("board watch: no %s triggers (a schema not built by the migrations); "
                         "every anonymous board read asks the database", TRIGGER)
                return False
            self.changed()  # anything committed while nobody listened
            self.listening = True
            while not stop.is_set():
                for _ in connection.notifies(timeout=POLL_SECONDS):
                    self.changed()
                connection.execute("SELECT 1")  # a dead connection fails here, not silently
        return True
