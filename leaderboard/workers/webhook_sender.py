"""The embedded-mode webhook sender: a daemon thread in each serving process posts due deliveries every mail_seconds.

In celery mode, Celery beat schedules the same delivery on a worker (leaderboard.workers.celery_app,
``tailboard.send_webhooks``). Like the mail sender (workers/mail_sender.py) it starts with
the first request a process serves; several processes sending at once is safe, each
delivery being claimed with a conditional UPDATE (notify/webhooks.py). Not started in
tests (``testing``), which call ``run_once``.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from leaderboard.notify import webhooks
from leaderboard.platform import Runtime

log = logging.getLogger(__name__)
TASK = "tailboard.send_webhooks"
"""Name of the Celery task that posts the due webhook deliveries (scheduled by beat)."""


class WebhookSender:
    """One delivery-posting daemon thread per process, started on demand."""

    def __init__(self, runtime: Runtime, transport: webhooks.Transport | None = None) -> None:
        self.runtime = runtime
        self.transport = transport or webhooks.HttpTransport()
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        """Start this process's sending thread unless it runs already."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._stop = threading.Event()
            threading.Thread(target=self._loop, args=(self._stop,), name="tailboard-webhooks", daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after its current round."""
        self._stop.set()

    def run_once(self) -> int:
        """Post the due deliveries once in a fresh session; return how many were taken (0 when the round failed)."""
        try:
            with self.runtime.sessions() as session:
                return webhooks.deliver_due(self.runtime.context(session), transport=self.transport)
        except Exception:  # the database may be away: the next round tries again, the rows wait
            log.exception("posting webhooks failed; it runs again in %g s", self.runtime.settings.mail_seconds)
            return 0

    def _loop(self, stop: threading.Event) -> None:
        self.run_once()
        while not stop.wait(self.runtime.settings.mail_seconds):
            self.run_once()


def init_app(app: Any, runtime: Runtime) -> None:
    """Post webhook deliveries from each serving process in embedded mode, starting with its first request."""
    settings = runtime.settings
    if settings.scoring_mode != "inline" or settings.mail_seconds <= 0:
        return
    sender = WebhookSender(runtime)
    app.extensions["tailboard_webhooks"] = sender
    if not settings.testing:
        app.before_request(sender.start)
