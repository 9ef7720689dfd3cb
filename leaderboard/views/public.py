"""Public pages: competitions, phases, uploads, rankings and one submission's scores."""

from __future__ import annotations

import io
import mimetypes
from typing import Any

from flask import (
    Blueprint,
    current_app,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)
from flask_login import current_user, login_required
from werkzeug.wrappers import Response

from leaderboard.extensions import limiter, login_manager
from leaderboard.forms import SubmissionForm
from leaderboard.services import competitions, phases, quota, ranking, submissions
from leaderboard.services.errors import (
    Forbidden,
    NotFound,
    QuotaExceeded,
    SubmissionInvalid,
)
from leaderboard.web import ctx

bp = Blueprint("public", __name__)


def _user() -> Any:
    """Return the logged-in User row, or None for an anonymous visitor."""
    return current_user._get_current_object() if current_user.is_authenticated else None


@bp.get("/")
def index() -> str:
    """List competitions, those with an open phase first."""
    return render_template("public/index.html", competitions=competitions.list_competitions(ctx()))


@bp.get("/c/<slug>")
def competition(slug: str) -> str:
    """Show a competition: description, phases as tabs with status and dates, data, top entries."""
    comp = competitions.get_competition(ctx(), slug)
    selected = _selected_phase(comp.phases, request.args.get("phase", type=int))
    board = None
    if selected is not None:
        try:
            board = ranking.leaderboard(ctx(), phase_id=selected.id, viewer=_user())
        except Forbidden:
            board = None  # the organizers keep this ranking hidden
    return render_template("public/competition.html", competition=comp, phase=selected, board=board)


@bp.get("/phases/<int:phase_id>/files/<name>")
def phase_file(phase_id: int, name: str) -> Response:
    """Send one of a phase's public files (questions, starting kit) as a download."""
    filename, data = phases.public_file(ctx(), phase_id=phase_id, name=name, viewer=_user())
    mimetype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return send_file(io.BytesIO(data), mimetype=mimetype, as_attachment=True, download_name=filename)


@bp.get("/phases/<int:phase_id>")
def phase(phase_id: int) -> str:
    """Show a phase: rules, metrics, limits, the caller's quota, upload form and history."""
    return _render_phase(phase_id, SubmissionForm())


def _uploader_key() -> str:
    """Return the rate-limit key of an upload: the logged-in user."""
    return f"user:{current_user.get_id()}"


def _invalid_upload_limit() -> str:
    """Return the limit on rejected web uploads per user (they cost no quota, so they are rate-limited)."""
    return str(current_app.config.get("WEB_INVALID_UPLOAD_RATELIMIT", "30 per hour"))


@bp.post("/phases/<int:phase_id>")
@login_required
@limiter.limit(_invalid_upload_limit, key_func=_uploader_key, deduct_when=lambda r: r.status_code in (400, 413),
               override_defaults=False, error_message="Too many rejected uploads; fix the file and try again later.")
def upload(phase_id: int) -> Response | tuple[str, int]:
    """Accept an uploaded prediction file and go to its submission page."""
    form = SubmissionForm()
    if not form.validate_on_submit():
        return _render_phase(phase_id, form), 400
    try:
        submission = submissions.accept_submission(
            ctx(), phase_id=phase_id, user=_user(), filename=form.file.data.filename or "predictions",
            stream=form.file.data.stream, description=form.description.data or "",
        )
    except SubmissionInvalid as exc:
        return _render_phase(phase_id, form, invalid=exc.details), 400
    except QuotaExceeded as exc:
        return _render_phase(phase_id, form, quota_error=exc), 429
    return redirect(url_for("public.submission", submission_id=submission.id), code=303)


@bp.get("/phases/<int:phase_id>/leaderboard")
def leaderboard(phase_id: int) -> str:
    """Show the ranking of a phase with its breakdowns and head/tail comparison."""
    board = ranking.leaderboard(ctx(), phase_id=phase_id, viewer=_user())
    return render_template("public/leaderboard.html", board=board, phase=board.phase)


@bp.get("/submissions/<int:submission_id>")
def submission(submission_id: int) -> str | Response:
    """Show one submission: status, scores with CIs, breakdowns, validation errors."""
    user = _user()
    try:
        sub = submissions.get_submission(ctx(), submission_id=submission_id, viewer=user)
    except NotFound:
        if user is None:  # maybe their own, after the session expired
            return login_manager.unauthorized()
        raise
    results = submissions.visible_scores(ctx(), submission=sub, viewer=user)
    return render_template("public/submission.html", submission=sub, phase=sub.phase, results=results)


def _render_phase(phase_id: int, form: SubmissionForm, **extra: Any) -> str:
    """Render the phase page with the caller's quota and history when logged in."""
    phase_row = phases.get_phase(ctx(), phase_id)
    user = _user()
    status, history = None, []
    if user is not None:
        status = quota.quota_status(ctx(), phase=phase_row, user=user)
        history = submissions.list_submissions(ctx(), phase_id=phase_id, user=user)
    return render_template("public/phase.html", phase=phase_row, form=form, quota=status, history=history, **extra)


def _selected_phase(phase_list: list[Any], wanted: int | None) -> Any:
    """Return the phase tab to show: the one asked for, else the first open one, else the latest."""
    by_id = {p.id: p for p in phase_list}
    if wanted in by_id:
        return by_id[wanted]
    open_now = [p for p in phase_list if phases.phase_status(p) == "open"]
    return (open_now or phase_list or [None])[0 if open_now else -1]
