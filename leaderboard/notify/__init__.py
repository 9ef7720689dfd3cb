"""Mail to people: the outbox (rows written in the caller's transaction, delivered and retried later).

Notifications and webhooks go here next. May import models and platform only.
"""

from __future__ import annotations

from leaderboard.notify.outbox import Transport, deliver_due, mail_enabled, send_mail

__all__ = [
    "Transport", "deliver_due", "mail_enabled", "send_mail"
]
