"""The embedded-mode webhook sender: a daemon thread in each serving process posts due deliveries every mail_seconds.

In celery mode, Celery beat schedules the same delivery on a worker (leaderboard.workers.celery_app,
``tailboard.send_webhooks``). Like the mail sender (workers/mail_sender.py) it starts with
the first request a process serves; several processes sending at once is safe, each
delivery being claimed with a conditional UPDATE (notify/webhooks.py). Not started in
tests (``testing``), which call ``run_once``.
"""

from __future__ import annotations

import logging
from typing import Any

from leaderboard.notify import webhooks
from leaderboard.platform import Runtime
from leaderboard.workers.periodic import PeriodicThread

log = logging.getLogger(__name__)
TASK = "tailboard.send_webhooks"
"""Name of the Celery task that posts the due webhook deliveries (scheduled by beat)."""


class WebhookSender(PeriodicThread):
    """One delivery-posting daemon thread per process, started on demand."""

    name = "tailboard-webhooks"
    run_at_start = True

    def __init__(self, runtime: Runtime, transport: webhooks.Transport | None = None) -> None:
        super().__init__()
        self.runtime = runtime
        self.transport = transport or webhooks.HttpTransport()

    def interval(self) -> float:
        """Return the seconds between two rounds."""
        return self.runtime.settings.mail_seconds

    def run_once(self) -> int:
        """Post the due deliveries once in a fresh session; return how many were taken (0 when the round failed)."""
        try:
            with self.runtime.sessions() as session:
                return webhooks.deliver_due(self.runtime.context(session), transport=self.transport)
        except Exception:  # the database may be away: the next round tries again, the rows wait
            log.exception("posting webhooks failed; it runs again in %g s", self.runtime.settings.mail_seconds)
            return 0


def init_app(app: Any, runtime: Runtime) -> None:
    """Post webhook deliveries from each serving process in embedded mode, starting with its first request."""
    settings = runtime.settings
    if settings.scoring_mode != "inline" or settings.mail_seconds <= 0:
        return
    sender = WebhookSender(runtime)
    app.extensions["tailboard_webhooks"] = sender
    if not settings.testing:
        app.before_request(sender.start)
