"""Dispatchers hand a committed, queued submission to a scorer: in-process or via Celery.

A dispatcher is called only after the submission is committed as queued, so a lost
dispatch (a crash, a broker outage) leaves it queued for ``requeue_unfinished``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Iterable, Protocol

if TYPE_CHECKING:
    from leaderboard.runtime import Runtime, ServiceContext

log = logging.getLogger(__name__)

SCORE_TASK = "tailboard.score_submission"
"""Name of the Celery task that scores one submission (args: [submission_id])."""


class Dispatcher(Protocol):
    """Something that gets a queued submission scored, now or soon."""

    def dispatch(self, submission_id: int) -> None:
        """Have the submission scored."""
        ...


class InlineDispatcher:
    """Score right away in this process, in a fresh session (the caller's has committed)."""

    def __init__(self, runtime: "Runtime") -> None:
        self.runtime = runtime

    def dispatch(self, submission_id: int) -> None:
        """Score the submission before returning."""
        from leaderboard.services.scoring_runs import score_submission

        with self.runtime.sessions() as session:
            score_submission(self.runtime.context(session), submission_id=submission_id)


class CeleryDispatcher:
    """Send the scoring task by name to the broker; the worker runs leaderboard.tasks."""

    def __init__(self, celery_app: Any) -> None:
        self.celery_app = celery_app

    def dispatch(self, submission_id: int) -> None:
        """Queue the scoring task for the submission."""
        self.celery_app.send_task(SCORE_TASK, args=[submission_id])


def make_dispatcher(runtime: "Runtime") -> Dispatcher:
    """Return the dispatcher named by settings.scoring_mode ('inline' or 'celery')."""
    if runtime.settings.scoring_mode == "celery":
        from celery import Celery

        # A producer-only app: it connects on the first send, not here.
        return CeleryDispatcher(Celery("tailboard", broker=runtime.settings.celery_broker_url))
    return InlineDispatcher(runtime)


def dispatch_all(ctx: "ServiceContext", submission_ids: Iterable[int]) -> None:
    """Dispatch each committed submission; a failed dispatch is logged and left for requeue."""
    dispatcher = ctx.runtime.dispatcher
    if dispatcher is None:
        log.warning("no dispatcher configured; submissions stay queued: %s", list(submission_ids))
        return
    for submission_id in submission_ids:
        try:
            dispatcher.dispatch(submission_id)
        except Exception:  # the row is committed as queued; requeue_unfinished retries it
            log.exception("dispatching submission %s failed; it stays queued", submission_id)
