"""Background jobs (docs/ORGANIZING.md): rows that say what runs, how far it got, and who holds it.

A job is created ``queued`` and committed before it is dispatched (``ctx.dispatch_job``),
so a lost dispatch only delays it. A run claims it with a conditional UPDATE (queued, or
running with a heartbeat older than lease_seconds: its process died, as the run renews
its heartbeat every few seconds while it works, platform/leases.py) and a fresh token;
every step of progress is another conditional UPDATE on that token, so a run that lost
its claim (taken over, or superseded by a newer job on the same phase) stops at its next
step without writing. The kinds' work lives in operations/job_runner.py.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from leaderboard.accounts import Actor, Operator, can_manage
from leaderboard.accounts.audit import actor_id, actor_name
from leaderboard.models import Competition, Job
from leaderboard.platform import NotFound, ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.leases import Renew

UNFINISHED = ("queued", "running")
MAX_ERROR = 2000


@dataclass(frozen=True)
class JobView:
    """What the progress page and GET /api/v1/jobs/<id> show (managers of its competition only)."""

    id: int
    kind: str
    status: str
    done: int
    total: int | None
    error: str | None
    phase_id: int | None
    competition_slug: str | None
    created_at: datetime
    finished_at: datetime | None


def create_job(ctx: ServiceContext, *, kind: str, actor: Actor, competition_id: int | None,
               phase_id: int | None = None, params: dict[str, Any] | None = None, total: int | None = None) -> Job:
    """Insert a queued job and commit it; a newer job of the same kind on a phase supersedes unfinished ones."""
    if phase_id is not None:
        ctx.session.execute(
            update(Job).where(Job.phase_id == phase_id, Job.kind == kind, Job.status.in_(UNFINISHED))
            .values(status="failed", error="superseded by a newer job on this phase", finished_at=utcnow(),
                    claimed_by=None)
            .execution_options(synchronize_session=False))
    job = Job(kind=kind, status="queued", competition_id=competition_id, phase_id=phase_id, params=params or {},
              done=0, total=total, actor_id=actor_id(actor), actor_name=actor_name(actor)[:120])
    ctx.session.add(job)
    ctx.session.commit()
    return job


def claim_job(ctx: ServiceContext, *, job_id: int, now: datetime | None = None) -> str | None:
    """Take a queued or abandoned job for this run; return the run's token, or None when another run holds it."""
    now = now or utcnow()
    stale = now - timedelta(seconds=ctx.settings.lease_seconds)
    token = uuid.uuid4().hex
    result = ctx.session.execute(
        update(Job).where(Job.id == job_id, _claimable(stale))
        .values(status="running", claimed_by=token, heartbeat_at=now)
        .execution_options(synchronize_session=False))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        ctx.session.rollback()
        return None
    job = ctx.session.get(Job, job_id, populate_existing=True)
    if job is not None and job.started_at is None:
        job.started_at = now
    ctx.session.commit()
    return token


def progress(ctx: ServiceContext, *, job_id: int, token: str, done: int, total: int | None = None,
             params: dict[str, Any] | None = None) -> bool:
    """Record progress (and the resume point in params) if this run still holds the job; commit; return whether."""
    values: dict[str, Any] = {"done": done, "heartbeat_at": utcnow()}
    if total is not None:
        values["total"] = total
    if params is not None:
        values["params"] = params
    held = ctx.session.execute(
        update(Job).where(Job.id == job_id, Job.claimed_by == token, Job.status == "running").values(**values)
        .execution_options(synchronize_session=False)).rowcount == 1  # type: ignore[attr-defined]
    if held:
        ctx.session.commit()
    else:
        ctx.session.rollback()
    return held


def finish(ctx: ServiceContext, *, job_id: int, token: str, error: str | None = None) -> bool:
    """End a held job done (or failed with error, a message for managers); return whether this run held it."""
    values: dict[str, Any] = {"status": "failed" if error else "done", "finished_at": utcnow(), "claimed_by": None,
                              "error": error[:MAX_ERROR] if error else None}
    held = ctx.session.execute(
        update(Job).where(Job.id == job_id, Job.claimed_by == token, Job.status == "running").values(**values)
        .execution_options(synchronize_session=False)).rowcount == 1  # type: ignore[attr-defined]
    ctx.session.commit()
    return held


def resumable_ids(ctx: ServiceContext, *, now: datetime | None = None) -> list[int]:
    """Return the jobs a worker should run now: queued ones, and running ones whose run stopped beating."""
    stale = (now or utcnow()) - timedelta(seconds=ctx.settings.lease_seconds)
    return list(ctx.session.scalars(select(Job.id).where(_claimable(stale)).order_by(Job.id)))


def renewer(job_id: int, token: str) -> Renew:
    """Return the renewal of the heartbeat of the run holding the job with token (platform/leases.py)."""
    def renew(session: Session, _until: datetime) -> bool:
        result = session.execute(
            update(Job).where(Job.id == job_id, Job.claimed_by == token, Job.status == "running")
            .values(heartbeat_at=utcnow())
            .execution_options(synchronize_session=False))
        session.commit()
        return result.rowcount == 1  # type: ignore[attr-defined]

    return renew


def get_job(ctx: ServiceContext, *, job_id: int, actor: Actor | None) -> JobView:
    """Return a job's progress to a manager of its competition (NotFound for anyone else: jobs are not public)."""
    job = ctx.session.get(Job, job_id, populate_existing=True)
    if job is None:
        raise NotFound(f"No job {job_id}.")
    slug = None
    competition = ctx.session.get(Competition, job.competition_id) if job.competition_id is not None else None
    if competition is not None:
        if not can_manage(competition, actor):
            raise NotFound(f"No job {job_id}.")
        slug = competition.slug
    elif not isinstance(actor, Operator):  # a job of no competition is the operator's alone
        raise NotFound(f"No job {job_id}.")
    return JobView(id=job.id, kind=job.kind, status=job.status, done=job.done, total=job.total, error=job.error,
                   phase_id=job.phase_id, competition_slug=slug, created_at=job.created_at,
                   finished_at=job.finished_at)


def _claimable(stale: datetime) -> Any:
    """Return the condition of a job a run may take: queued, or running with a heartbeat older than stale."""
    return or_(Job.status == "queued", (Job.status == "running") & (Job.heartbeat_at < stale))

