"""A job's lease (docs/RUNNING.md#leases): its run renews the heartbeat; a lapsed one is taken over."""

from __future__ import annotations

import dataclasses
import threading
from datetime import timedelta

from sqlalchemy import select, update

from leaderboard.accounts import OPERATOR
from leaderboard.models import Job
from leaderboard.operations import job_runner, jobs, run_job
from leaderboard.organizing import phases
from leaderboard.platform.db import utcnow


def beat(ctx, job_id: int, seconds_ago: float) -> None:
    """Set the job's heartbeat to that many seconds ago."""
    ctx.session.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=utcnow() - timedelta(
        seconds=seconds_ago)))
    ctx.session.commit()


def test_a_running_job_whose_heartbeat_is_older_than_its_lease_is_taken_over(ctx, make_phase):
    job = phases.rescore_phase(ctx, phase_id=make_phase().id, actor=OPERATOR, run=False)
    assert jobs.claim_job(ctx, job_id=job.id) is not None
    lease = ctx.settings.lease_seconds
    assert lease * 10 < ctx.settings.stale_seconds
    beat(ctx, job.id, lease / 2)
    assert jobs.resumable_ids(ctx) == []  # alive
    beat(ctx, job.id, lease + 1)
    assert jobs.resumable_ids(ctx) == [job.id]  # its run was killed: a lease, not stale_seconds, later
    assert jobs.claim_job(ctx, job_id=job.id) is not None


def test_a_job_run_renews_its_heartbeat_while_it_works(ctx, runtime, make_phase, monkeypatch):
    monkeypatch.setattr(runtime, "settings", dataclasses.replace(runtime.settings, lease_seconds=1.0))
    job = phases.rescore_phase(ctx, phase_id=make_phase().id, actor=OPERATOR, run=False)
    renewed = threading.Event()

    def work(ctx, *, job_id: int, token: str) -> None:
        first = None
        for _ in range(600):  # until a renewal moved the heartbeat (about every 0.25 s), at most a minute
            with runtime.sessions() as session:
                heartbeat = session.scalar(select(Job.heartbeat_at).where(Job.id == job_id))
            first = first or heartbeat
            if heartbeat > first:
                renewed.set()
                return
            threading.Event().wait(0.1)

    monkeypatch.setitem(job_runner.KINDS, "rescore", work)
    run_job(ctx, job_id=job.id)
    assert renewed.is_set()
    assert ctx.session.get(Job, job.id, populate_existing=True).status == "done"
