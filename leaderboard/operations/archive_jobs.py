"""The archive export as a job (docs/ORGANIZING.md): the web's "Prepare the archive" button.

The job writes the same zip the streamed export sends (operations/archive_export.py)
into a temporary file, then stores it in the hidden-labels storage (``ctx.labels``:
the archive holds every label version, and that storage is never routed nor served
as such). The job page then offers a download, read from storage, to the managers
of the competition only; anyone else is told there is no such job. Only the newest
archive of a competition is kept: a finished job deletes the older ones, whose links
then answer 404. Asking for the archive and downloading it are both in the audit log.
"""

from __future__ import annotations

import tempfile
from typing import BinaryIO

from leaderboard.accounts import Actor, audit, managed_competition
from leaderboard.models import Competition, Job
from leaderboard.operations import jobs
from leaderboard.operations.archive_export import _stream
from leaderboard.platform import NotFound, ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.storage.base import ObjectNotFound

KIND = "archive_export"
PROGRESS_EVERY = 4 * 1024 * 1024
"""Bytes written between two progress steps (each also checks the run still holds the job)."""


def start_archive_export(ctx: ServiceContext, *, slug: str, actor: Actor, run: bool = True) -> Job:
    """Create the job that builds a managed competition's archive, log it, and dispatch it (unless run=False)."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    name = f"{competition.slug}-{utcnow():%Y%m%d-%H%M%S}.zip"
    job = jobs.create_job(ctx, kind=KIND, actor=actor, competition_id=competition.id, params={"name": name})
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {competition.slug}",
                 summary=f"asked for the archive export (job {job.id})")
    if run:
        ctx.dispatch_job(job.id)
    return job


def run_archive_export(ctx: ServiceContext, *, job_id: int, token: str) -> None:
    """Write the competition's archive to a temporary file, then store it and record its key in the job."""
    job = ctx.session.get(Job, job_id)
    assert job is not None and job.competition_id is not None
    name = str((job.params or {}).get("name") or f"competition-{job.competition_id}.zip")
    written = 0
    with tempfile.TemporaryFile() as spool:
        since = 0
        for chunk in _stream(ctx, job.competition_id):
            spool.write(chunk)
            written += len(chunk)
            if written - since >= PROGRESS_EVERY:
                since = written
                if not jobs.progress(ctx, job_id=job_id, token=token, done=written):
                    return  # another run holds the job now
        spool.seek(0)
        key = f"archives/{job.competition_id}/{job_id}.zip"
        stored = ctx.labels.put(key, spool)
    for older in list(ctx.labels.iter_keys(f"archives/{job.competition_id}/")):
        if older != key:  # one stored archive per competition: the newest
            ctx.labels.delete(older)
    jobs.progress(ctx, job_id=job_id, token=token, done=stored.size, total=stored.size,
                  params={"name": name, "key": key, "sha256": stored.sha256})


def archive_download(ctx: ServiceContext, *, job_id: int, actor: Actor) -> tuple[str, BinaryIO]:
    """Return (file name, open stream) of a finished archive job's zip, for a manager of its competition; log it."""
    view = jobs.get_job(ctx, job_id=job_id, actor=actor)  # NotFound for anyone who does not manage it
    job = ctx.session.get(Job, job_id)
    key = (job.params or {}).get("key") if job is not None else None
    if view.kind != KIND or view.status != "done" or not key or job is None or job.competition_id is None:
        raise NotFound(f"Job {job_id} has no archive to download.")
    competition = ctx.session.get(Competition, job.competition_id)
    assert competition is not None
    try:
        stream = ctx.labels.open(str(key))
    except ObjectNotFound:
        raise NotFound(f"The archive of job {job_id} was replaced by a newer one; prepare it again.") from None
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {competition.slug}",
                 summary=f"downloaded the archive (job {job_id})")
    return str(job.params.get("name") or f"{competition.slug}.zip"), stream
