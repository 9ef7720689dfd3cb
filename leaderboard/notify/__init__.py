"""Mail and webhooks to people: the mail outbox, submission mails, announcements, signed webhooks.

Every notice is a row written in the transaction of the event that causes it (so a
rolled-back event sends nothing and a restart loses nothing) and delivered later by a
background sender (leaderboard/workers/mail_sender.py, webhook_sender.py, or Celery's
``tailboard.send_mail`` and ``tailboard.send_webhooks``). ``events`` is what the writers
call (a submission scored or failed, a board changed); ``phase_notices`` the
phase.opened / phase.closed webhooks, told once per change of a phase's status (by
hand, or by its dates from the sweep); ``preferences`` the user's off switch;
``announcements`` an organizer's mail to a phase's audience; ``webhooks`` the signed
deliveries. docs/NOTIFY.md describes them.
May import models and platform only.
"""

from __future__ import annotations

from leaderboard.notify import announcements, events, preferences, webhooks
from leaderboard.notify.outbox import Transport, deliver_due, mail_enabled, send_mail

__all__ = [
    "Transport", "announcements", "deliver_due", "events", "mail_enabled", "preferences", "send_mail", "webhooks",
]
