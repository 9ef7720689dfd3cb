"""Run inline scoring after the response is sent, so an upload is answered before it is scored.

With ``TAILBOARD_SCORING=inline`` the dispatcher scores in-process as soon as a service
dispatches. The API promises 202 before scoring finishes, so its calls get a service
context whose dispatcher only records the submission ids; the real dispatcher runs them
when the WSGI server closes the response. A crash in between leaves the submissions
queued, and ``requeue_unfinished`` scores them at the next start.
"""

from __future__ import annotations

import dataclasses
import logging

from flask import Response, after_this_request

from leaderboard.platform import ServiceContext
from leaderboard.platform.runtime import Dispatcher, JobDispatcher
from leaderboard.web import context

log = logging.getLogger(__name__)


class DeferredDispatcher:
    """Collect dispatched submission ids and hand them to the real dispatcher later."""

    def __init__(self, target: Dispatcher, jobs: JobDispatcher | None = None) -> None:
        self.target = target
        self.jobs = jobs
        self.pending: list[int] = []
        self.pending_jobs: list[int] = []

    def dispatch_job(self, job_id: int) -> None:
        """Remember job_id for running after the response (an inline job would hold the answer back)."""
        self.pending_jobs.append(job_id)

    def dispatch(self, submission_id: int) -> None:
        """Remember submission_id for dispatching after the response."""
        self.pending.append(submission_id)

    def flush(self) -> None:
        """Dispatch every remembered submission with the real dispatcher."""
        while self.pending:
            submission_id = self.pending.pop(0)
            try:
                self.target.dispatch(submission_id)
            except Exception:  # the submission stays queued; requeue_unfinished retries it
                log.exception("dispatching submission %s after the response failed", submission_id)
        while self.pending_jobs and self.jobs is not None:
            job_id = self.pending_jobs.pop(0)
            try:
                self.jobs.dispatch_job(job_id)
            except Exception:  # the job stays queued; a worker's pick-up resumes it
                log.exception("dispatching job %s after the response failed", job_id)


def dispatch_after_response() -> ServiceContext:
    """Return the request's service context, with inline dispatch postponed past the response."""
    base = context.ctx()
    if base.settings.scoring_mode != "inline" or base.runtime.dispatcher is None:
        return base
    deferred = DeferredDispatcher(base.runtime.dispatcher, base.runtime.job_dispatcher)

    @after_this_request
    def _dispatch_on_close(response: Response) -> Response:
        response.call_on_close(deferred.flush)
        return response

    runtime = dataclasses.replace(base.runtime, dispatcher=deferred, job_dispatcher=deferred)
    return ServiceContext(session=base.session, runtime=runtime)
