"""Whether what an anonymous board read depends on may have changed since a given moment.

The board cache (web/board_cache/middleware.py) would ask the database for a board's state on every
anonymous read. At 50 concurrent readers on a small machine that query, not the cached
answer, set the latency (on PostgreSQL two round trips; on SQLite a few system calls,
each a chance for another thread to take the interpreter). So each serving process
keeps a ``generation`` that moves whenever that state may have moved, and the cache
remembers a state read while the generation stays the same:

- every transaction this process commits moves it, once the commit is done
  (write_signal.on_committed_write), so a process never reads around its own change;
- on SQLite, every process that writes the database moves the file's shared stamp
  (write_signal.SharedStamp), read here from memory: no reader anywhere on the host
  reads around a committed change;
- on PostgreSQL, a thread LISTENs on ``tailboard_boards``, which triggers on the
  phases, competitions and boards tables NOTIFY on every committed change, whoever
  wrote it, from any host (migration 0007). Losing or regaining that connection moves
  the generation, and while it is down nothing is trusted (``listening`` is False):
  every read asks the database.

A remembered state is trusted for at most ``MAX_AGE_SECONDS`` in any case: a bound for
writes no signal sees (the sqlite3 shell on the file). What another process commits on
PostgreSQL reaches this one when its NOTIFY does, well under a millisecond on one host;
only anonymous readers are served this way (a logged-in reader or an API token always
goes to the app and the database).

The listening thread starts on a process's first anonymous board read, never in a
preloading master. A PostgreSQL schema without the triggers (built by ``create_all``,
not by the migrations) is never trusted: the thread sees that and stops.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading

import psycopg
from sqlalchemy import Engine

from leaderboard.platform.write_signal import SharedStamp, on_committed_write, shared_stamp

log = logging.getLogger(__name__)

CHANNEL = "tailboard_boards"
TRIGGER = "tailboard_board_notify"
APPLICATION_NAME = "tailboard-board-watch"  # how the listening connection shows in pg_stat_activity
MAX_AGE_SECONDS = 5.0
POLL_SECONDS = 1.0  # how often the thread wakes to check its connection (and whether to stop)
RETRY_SECONDS = (0.5, 10.0)  # first and longest wait before reconnecting


class BoardWatch:
    """One process's view of possible changes to board state: its own commits, and the shared stamp or LISTEN."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._local = 0
        self._changes = itertools.count(1)
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.stamp: SharedStamp | None = None
        self.listening = False
        if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
            self.stamp = shared_stamp(str(engine.url.database))
            self.listening = self.stamp is not None
        on_committed_write(engine, self.changed)

    @property
    def generation(self) -> tuple[int, bytes]:
        """Return a value that differs from every earlier one once the board state may have changed."""
        return self._local, b"" if self.stamp is None else self.stamp.read()

    def changed(self) -> None:
        """Move the generation: whatever was read before may be out of date."""
        self._local = next(self._changes)

    def start(self) -> None:
        """Start this process's listening thread unless it runs already (PostgreSQL only)."""
        if self._pid == os.getpid() or self.engine.dialect.name != "postgresql":
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
        """Ask the listening thread to end (it stops trusting as it ends)."""
        self._stop.set()

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
