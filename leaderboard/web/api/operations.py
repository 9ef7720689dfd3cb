"""API handlers of organizer operations (docs/ORGANIZING.md): jobs, the audit log, moderation, submission files."""

from __future__ import annotations

from flask import Response, request

from leaderboard.accounts import audit
from leaderboard.operations import export_competition, jobs, moderation
from leaderboard.platform.db import as_aware_utc
from leaderboard.web import context
from leaderboard.web.api import schemas, serialize
from leaderboard.web.api.auth import require_organizer
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_json, respond


@bp.get("/jobs/<id:job_id>")
@operation("A background job's progress (managers of its competition)", schemas.Job, auth="organizer",
           errors=(404,), tag="organizers")
def get_job(job_id: int) -> tuple[Response, int]:
    """Show a job's status, done/total and, when it failed, why."""
    return respond(serialize.job(jobs.get_job(context.ctx(), job_id=job_id, actor=require_organizer())))


@bp.get("/competitions/<slug>/audit")
@operation("A competition's audit log, newest first (managers only)", schemas.AuditLog, auth="organizer",
           errors=(403, 404), tag="organizers")
def get_audit(slug: str) -> tuple[Response, int]:
    """List who did what to a competition, and when."""
    rows = audit.audit_log(context.ctx(), slug=slug, actor=require_organizer())
    return respond(schemas.AuditLog(entries=[schemas.AuditEntry(at=as_aware_utc(row.at), actor=row.actor,
                                                                target=row.target, summary=row.summary)
                                             for row in rows]))


@bp.post("/submissions/<id:submission_id>/hide")
@operation("Hide a submission from the board (its owner sees it hidden, and why if a reason is given)",
           schemas.Moderation, auth="organizer", body=schemas.ModerationReason, errors=(400, 404, 409),
           tag="organizers")
def hide_submission(submission_id: int) -> tuple[Response, int]:
    """Hide a submission; it leaves the board at once."""
    return _moderate(submission_id, "hidden")


@bp.post("/submissions/<id:submission_id>/disqualify")
@operation("Disqualify a submission with a reason its owner reads; it leaves the board at once",
           schemas.Moderation, auth="organizer", body=schemas.ModerationReason, errors=(400, 404, 409),
           tag="organizers")
def disqualify_submission(submission_id: int) -> tuple[Response, int]:
    """Disqualify a submission (a reason is required)."""
    return _moderate(submission_id, "disqualified")


@bp.post("/submissions/<id:submission_id>/restore")
@operation("Put a hidden or disqualified submission back on the board", schemas.Moderation, auth="organizer",
           errors=(404, 409), tag="organizers")
def restore_submission(submission_id: int) -> tuple[Response, int]:
    """Restore a moderated submission."""
    return _moderate(submission_id, None)


def _moderate(submission_id: int, state: str | None) -> tuple[Response, int]:
    """Apply one moderation change for the calling organizer and answer the submission's new state."""
    organizer = require_organizer()
    body = parse_json(schemas.ModerationReason) if request.get_data() else schemas.ModerationReason(reason=None)
    item = moderation.moderate(context.ctx(), submission_id=submission_id, state=state, reason=body.reason,
                               actor=organizer)
    return respond(serialize.moderation(item) or schemas.Moderation(state="visible", reason=None, at=None))


@bp.get("/submissions/<id:submission_id>/file")
@operation("Download any submission's file (managers of its competition)", None, auth="organizer", errors=(404,),
           tag="organizers", media=(("application/octet-stream", "The file as uploaded."),))
def get_submission_file(submission_id: int) -> Response:
    """Send a submission's file as it was uploaded."""
    name, data = moderation.submission_file(context.ctx(), submission_id=submission_id, actor=require_organizer())
    return Response(data, mimetype="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{_ascii(name)}"'})


def _ascii(name: str) -> str:
    """Return a file name safe inside a Content-Disposition header."""
    return "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)


@bp.get("/competitions/<slug>/export")
@operation("The whole competition as one zip (docs/ORGANIZING.md; managers only), streamed", None, auth="organizer",
           errors=(403, 404), tag="organizers", media=(("application/zip", "The archive."),))
def export(slug: str) -> Response:
    """Stream the competition's archive: configs, every label version, files, scores, the audit log."""
    name, chunks = export_competition(context.ctx(), slug=slug, actor=require_organizer())
    return Response(chunks, mimetype="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="{_ascii(name)}"'})
