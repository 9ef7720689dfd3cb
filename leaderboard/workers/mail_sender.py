"""The embedded-mode mail sender: a daemon thread in each serving process sends the outbox every mail_seconds.

In celery mode, Celery beat schedules the same delivery on a worker (leaderboard.workers.celery_app,
``tailboard.send_mail``). Like the sweep (workers/sweeper.py), the thread starts with the first
request a process serves, not in ``create_app``: ``flask --app app ...`` commands and a
preloading master never run one. Several processes sending at once is safe: each mail
is claimed with a conditional UPDATE (notify/outbox.py). Only while mail is on
(TAILBOARD_SMTP_URL); not started in tests (``testing``), which call ``run_once``.
"""

from __future__ import annotations

import logging
from typing import Any

from leaderboard.notify import outbox
from leaderboard.platform import Runtime
from leaderboard.platform.smtp import SmtpTransport, parse_smtp_url
from leaderboard.workers.periodic import PeriodicThread

log = logging.getLogger(__name__)


def smtp_transport(runtime: Runtime) -> SmtpTransport:
    """Return the SMTP transport of the runtime's settings (mail must be on)."""
    return SmtpTransport(parse_smtp_url(runtime.settings.smtp_url or ""))


class MailSender(PeriodicThread):
    """One outbox-sending daemon thread per process, started on demand."""

    name = "tailboard-mail"
    run_at_start = True

    def __init__(self, runtime: Runtime, transport: outbox.Transport | None = None) -> None:
        super().__init__()
        self.runtime = runtime
        self.transport = transport or smtp_transport(runtime)

    def interval(self) -> float:
        """Return the seconds between two rounds."""
        return self.runtime.settings.mail_seconds

    def run_once(self) -> int:
        """Send the due mails once in a fresh session; return how many were sent (0 when the round failed)."""
        try:
            with self.runtime.sessions() as session:
                return outbox.deliver_due(self.runtime.context(session), transport=self.transport)
        except Exception:  # the database may be away: the next round tries again, the rows wait
            log.exception("sending mail failed; it runs again in %g s", self.runtime.settings.mail_seconds)
            return 0


def init_app(app: Any, runtime: Runtime) -> None:
    """Send the outbox from each serving process in embedded mode, starting with its first request."""
    settings = runtime.settings
    if not outbox.mail_enabled(settings) or settings.scoring_mode != "inline" or settings.mail_seconds <= 0:
        return
    sender = MailSender(runtime)
    app.extensions["tailboard_mail"] = sender
    if not settings.testing:
        app.before_request(sender.start)
