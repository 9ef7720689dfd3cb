"""What the operator should know when an instance starts, logged once per app as WARNING lines.

Mail off: without TAILBOARD_SMTP_URL no mail is sent and email confirmation is off.
Ownerless competitions: only the operator (the command line) manages them; each line
names the command that gives one its owner. A database that cannot be read yet (not
migrated) is noted and skipped: the check never stops an app from starting.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from leaderboard.notify import outbox
from leaderboard.organizing import competitions
from leaderboard.platform import Runtime

log = logging.getLogger(__name__)

MAIL_OFF = ("TAILBOARD_SMTP_URL is not set: this instance sends no mail, and email confirmation of new accounts is "
            "off (set TAILBOARD_SMTP_URL and TAILBOARD_MAIL_FROM to turn both on)")
SET_OWNER = "flask --app app competitions set-owner {slug} EMAIL"


def init_app(app: object, runtime: Runtime) -> None:
    """Log the start warnings of this instance."""
    if not outbox.mail_enabled(runtime.settings):
        log.warning(MAIL_OFF)
    warn_ownerless(runtime)


def warn_ownerless(runtime: Runtime) -> list[str]:
    """Log a WARNING naming the competitions without an owner, with the command to give each one; return them."""
    try:
        with runtime.sessions() as session:
            slugs = competitions.ownerless_slugs(runtime.context(session))
    except SQLAlchemyError as error:  # not migrated yet, or the database is away: nothing to report now
        log.info("could not look for competitions without an owner: %s", type(error).__name__)
        return []
    finally:
        runtime.engine.dispose()  # keep no connection open: a preloading master must not hand one to its workers
    if slugs:
        commands = "; ".join(SET_OWNER.format(slug=slug) for slug in slugs)
        log.warning("%d competition(s) have no owner, so only the operator (the command line) manages them: %s. "
                    "Give each its organizer: %s", len(slugs), ", ".join(slugs), commands)
    return slugs
