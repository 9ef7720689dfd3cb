"""The one job runner (docs/ORGANIZING.md): web, API, CLI, the worker thread and the Celery task all run jobs here.

``run_job`` claims the job (operations/jobs.py), runs its kind's work while a thread
renews its heartbeat (platform/leases.py: a run killed with -9 is taken over once it
lapses), and ends it done or failed. The error written on a failed job is read by the competition's managers only
(GET /api/v1/jobs/<id>, the progress page); participants never see a job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from leaderboard.models import Job
from leaderboard.operations import archive_jobs, jobs
from leaderboard.operations.rescoring import run_rescore
from leaderboard.platform import DomainError, ServiceContext
from leaderboard.platform.leases import renewing
from leaderboard.platform.sessions import rollback_quietly

log = logging.getLogger(__name__)

JobWork = Callable[..., None]
KINDS: dict[str, JobWork] = {"rescore": run_rescore, "replace_labels": run_rescore,
                              archive_jobs.KIND: archive_jobs.run_archive_export}
"""What each kind of job runs: work(ctx, *, job_id, token), resuming from the job's params."""


def run_job(ctx: ServiceContext, *, job_id: int) -> None:
    """Claim a queued or abandoned job, run its work to the end, and mark it done or failed."""
    token = jobs.claim_job(ctx, job_id=job_id)
    if token is None:
        log.info("job %s is not waiting to run (another run holds it, or it ended)", job_id)
        return
    job = ctx.session.get(Job, job_id)
    assert job is not None
    work = KINDS.get(job.kind)
    try:
        if work is None:
            raise DomainError(f"unknown job kind {job.kind!r}")
        with renewing(ctx.runtime.sessions, jobs.renewer(job_id, token), lease_seconds=ctx.settings.lease_seconds,
                      what=f"job {job_id}"):
            work(ctx, job_id=job_id, token=token)
    except Exception as error:  # the job ends failed with a message for its managers; the process goes on
        rollback_quietly(ctx.session)
        log.exception("job %s (%s) failed", job_id, job.kind)
        jobs.finish(ctx, job_id=job_id, token=token, error=describe(error))
        return
    jobs.finish(ctx, job_id=job_id, token=token)


def describe(error: BaseException) -> str:
    """Return a failed job's message for its managers: a domain error's own words, else the exception's kind."""
    if isinstance(error, DomainError):
        return error.message
    return f"{type(error).__name__}: {error}"[:jobs.MAX_ERROR]
