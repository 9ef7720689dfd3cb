"""Organizer pages of operations (docs/ORGANIZING.md): jobs, the audit log, reopening, moderation, files."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, url_for
from werkzeug.wrappers import Response

from leaderboard.accounts import audit, managed_competition, managed_phase
from leaderboard.operations import archive_jobs, jobs, moderation
from leaderboard.organizing import phases
from leaderboard.phase_data import public_file_names, put_public_file, remove_public_file
from leaderboard.platform import InvalidInput
from leaderboard.web import context
from leaderboard.web.context import ctx
from leaderboard.web.forms import ActionForm
from leaderboard.web.organizer_forms import ModerationForm, PublicFileForm, ReopenForm

bp = Blueprint("operations", __name__)

MODERATION = {"hide": ("hidden", "hidden from the ranking"), "disqualify": ("disqualified", "disqualified"),
              "restore": (None, "back on the ranking")}


bp.before_request(context.organizers_only)
_me = context.current_organizer


@bp.get("/jobs/<id:job_id>")
def job(job_id: int) -> str:
    """Show a background job's progress; the page refreshes itself until the job ends."""
    view = jobs.get_job(ctx(), job_id=job_id, actor=_me())
    return render_template("organizer/job.html", job=view, competition=_competition(view.competition_slug))


@bp.get("/jobs/<id:job_id>/archive")
def job_archive(job_id: int) -> Response:
    """Download the zip an archive job stored (managers of its competition only; 404 for anyone else)."""
    name, stream = archive_jobs.archive_download(ctx(), job_id=job_id, actor=_me())
    return Response(_chunks(stream), mimetype="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="{_ascii(name)}"'})


@bp.get("/c/<slug>/audit")
def audit_log(slug: str) -> str:
    """List who did what to a competition, newest first."""
    rows = audit.audit_log(ctx(), slug=slug, actor=_me())
    return render_template("organizer/audit.html", competition=_competition(slug), rows=rows)


@bp.route("/phases/<id:phase_id>/reopen", methods=["GET", "POST"])
def reopen(phase_id: int) -> Response | str | tuple[str, int]:
    """Ask for confirmation, then reopen a closed phase whose private split has been shown."""
    phase = managed_phase(ctx(), phase_id=phase_id, actor=_me())
    form = ReopenForm()
    if form.validate_on_submit():
        phases.open_phase(ctx(), phase_id=phase_id, actor=_me(), confirm=True)
        flash(f"“{phase.name}” is open again; the reopening is in the audit log.", "success")
        return redirect(url_for("organizer.competition", slug=phase.competition.slug), code=303)
    page = render_template("organizer/reopen.html", phase=phase, competition=phase.competition, form=form)
    return (page, 400) if form.is_submitted() else page


@bp.post("/submissions/<id:submission_id>/<any(hide, disqualify, restore):action>")
def moderate(submission_id: int, action: str) -> Response:
    """Hide, disqualify or restore a submission from the organizer's submission list."""
    form = ModerationForm()
    if not form.validate_on_submit():
        abort(400, "The form expired; reload the page and try again.")
    state, said = MODERATION[action]
    try:
        item = moderation.moderate(ctx(), submission_id=submission_id, state=state, reason=form.reason.data,
                                   actor=_me())
    except InvalidInput as exc:
        flash(exc.message, "error")
        item = moderation.managed_submission(ctx(), submission_id=submission_id, actor=_me())
    else:
        flash(f"Submission #{item.id} is {said}.", "success")
    return redirect(url_for("organizer.phase_submissions", phase_id=item.phase_id) + f"#sub-{item.id}", code=303)


@bp.get("/submissions/<id:submission_id>/file")
def submission_file(submission_id: int) -> Response:
    """Download any submission's file, as uploaded."""
    name, data = moderation.submission_file(ctx(), submission_id=submission_id, actor=_me())
    return Response(data, mimetype="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{_ascii(name)}"'})


@bp.route("/phases/<id:phase_id>/files", methods=["GET", "POST"])
def phase_files(phase_id: int) -> Response | str | tuple[str, int]:
    """List a phase's public files; upload a new one or replace one (questions.jsonl replaces the questions)."""
    phase = managed_phase(ctx(), phase_id=phase_id, actor=_me())
    form = PublicFileForm()
    if form.validate_on_submit():
        name = (form.name.data or "").strip() or (form.file.data.filename or "").rsplit("/", 1)[-1]
        try:
            said = put_public_file(ctx(), phase_id=phase_id, name=name, data=form.file.data.read(), actor=_me())
        except InvalidInput as exc:
            form.file.errors = [*form.file.errors, exc.message]
        else:
            flash(f"Done: {said}.", "success")
            return redirect(url_for("operations.phase_files", phase_id=phase_id), code=303)
    page = render_template("organizer/phase_files.html", phase=phase, competition=phase.competition, form=form,
                           extra=public_file_names(ctx(), phase), action_form=ActionForm())
    return (page, 400) if form.is_submitted() else page


@bp.post("/phases/<id:phase_id>/files/<name>/remove")
def remove_phase_file(phase_id: int, name: str) -> Response:
    """Remove an uploaded public file of a phase."""
    if not ActionForm().validate_on_submit():
        abort(400, "The form expired; reload the page and try again.")
    try:
        remove_public_file(ctx(), phase_id=phase_id, name=name, actor=_me())
    except InvalidInput as exc:
        flash(exc.message, "error")
    else:
        flash(f"{name} is no longer public.", "success")
    return redirect(url_for("operations.phase_files", phase_id=phase_id), code=303)


def _ascii(name: str) -> str:
    """Return a file name safe inside a Content-Disposition header."""
    return "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)


def _chunks(stream: Any) -> Iterator[bytes]:
    """Yield a stored file in 1 MiB pieces and close it."""
    with stream:
        while chunk := stream.read(1024 * 1024):
            yield chunk


def _competition(slug: str | None) -> Any:
    """Return the managed competition of a page (None for a job of no competition)."""
    return managed_competition(ctx(), slug=slug, actor=_me()) if slug else None
