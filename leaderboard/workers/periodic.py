"""A daemon thread per serving process that runs one round every few seconds (embedded mode's background work).

The sweeper, the mail sender and the webhook sender are each one: ``start`` is hooked to
a process's requests and starts the thread once per process (a forked gunicorn worker
starts its own: the pid is remembered), ``stop`` ends it after its current round, and
``run_once`` is the round, which tests call directly.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable


class OncePerProcess:
    """Run a start function once in each process: a forked gunicorn worker starts its own threads (the pid is kept)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None

    @property
    def done(self) -> bool:
        """Return whether this process has run its start function."""
        return self._pid == os.getpid()

    def run(self, start: Callable[[], None]) -> None:
        """Call start unless this process called it already (threads racing here call it once)."""
        if self.done:
            return
        with self._lock:
            if self.done:
                return
            self._pid = os.getpid()
            start()


class PeriodicThread:
    """One daemon thread per process calling ``run_once`` every ``interval()`` seconds."""

    name = "tailboard-periodic"
    run_at_start = False
    """Whether the thread runs a round as soon as it starts, before its first wait."""

    def __init__(self) -> None:
        self._once = OncePerProcess()
        self._stop = threading.Event()

    def interval(self) -> float:
        """Return the seconds between two rounds."""
        raise NotImplementedError

    def run_once(self) -> object:
        """Run one round; never raise (a failed round logs and waits for the next)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start this process's thread unless it runs already."""
        self._once.run(self._start_thread)

    def _start_thread(self) -> None:
        self._stop = threading.Event()
        threading.Thread(target=self._loop, args=(self._stop,), name=self.name, daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after its current round."""
        self._stop.set()

    def _loop(self, stop: threading.Event) -> None:
        if self.run_at_start:
            self.run_once()
        while not stop.wait(self.interval()):
            self.run_once()
