"""Public pages: competitions, phases, uploads, rankings and one submission's scores."""

from __future__ import annotations

import io
import mimetypes
from typing import Any

from flask import Blueprint, current_app, flash, jsonify, redirect, render_template, request, send_file, url_for
from flask_login import current_user, login_required
from werkzeug.wrappers import Response

from leaderboard import submissions
from leaderboard.accounts import (
    confirmation,
    get_competition,
    get_phase,
    get_submission,
    in_team,
    participation,
    phase_status,
    team_of,
)
from leaderboard.board import MAX_CURVES, BoardQuery, Leaderboard, badges, board_curves, board_page, ranking
from leaderboard.board.across_phases import across_phases
from leaderboard.board.entry_page import public_submission
from leaderboard.disclosure import ladder, probing
from leaderboard.entries import quota, rules, selections, teams
from leaderboard.organizing import competitions
from leaderboard.phase_data import public_file, public_file_names
from leaderboard.platform import Conflict, Forbidden, InvalidInput, NotFound, QuotaExceeded, SubmissionInvalid
from leaderboard.web.board_cache.middleware import note_shown_version
from leaderboard.web.board_cache.pages import cached_page
from leaderboard.web.board_cache.rows import RowPrinter
from leaderboard.web.board_cache.shared import HTML_MARKS, Marker, SharedBody, shared_body
from leaderboard.web.board_cache.viewers import framed, leave_parts
from leaderboard.web.charts import board_chart
from leaderboard.web.context import ctx
from leaderboard.web.extensions import limiter, login_manager
from leaderboard.web.forms import ActionForm, SubmissionForm
from leaderboard.web.pages import uploads
from leaderboard.web.pages.board_args import across_query, page_query

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
    comp = get_competition(ctx(), slug)
    selected = _selected_phase(comp.phases, request.args.get("phase", type=int))
    board = None
    if selected is not None:
        try:
            board = ranking.leaderboard(ctx(), phase_id=selected.id, viewer=_user(), query=BoardQuery(per_page=6))
        except Forbidden:
            board = None  # the organizers keep this ranking hidden
    across = across_phases(ctx(), slug=slug, viewer=_user(), query=across_query(request.args))
    taking_part = participation.participation_state(ctx(), competition=comp, user=_user())
    return render_template("public/competition.html", competition=comp, phase=selected, board=board, across=across,
                           taking_part=taking_part, action_form=ActionForm())


@bp.get("/phases/<id:phase_id>/files/<name>")
def phase_file(phase_id: int, name: str) -> Response:
    """Send one of a phase's public files (questions, starting kit) as a download."""
    filename, data = public_file(ctx(), phase_id=phase_id, name=name, viewer=_user())
    mimetype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return send_file(io.BytesIO(data), mimetype=mimetype, as_attachment=True, download_name=filename)


@bp.get("/phases/<id:phase_id>")
def phase(phase_id: int) -> str:
    """Show a phase: rules, metrics, limits, the caller's quota, upload form and history."""
    return _render_phase(phase_id, SubmissionForm())


def _uploader_key() -> str:
    """Return the rate-limit key of an upload: the logged-in user."""
    return f"user:{current_user.get_id()}"


ASKED = "X-Upload-Asked"  # an upload answered with a question (a file answering few items) instead of a charge


def _uncharged(response: Response) -> bool:
    """Return whether an upload ended without a charge: rejected (400, 413) or asked about; those are rate-limited."""
    return response.status_code in (400, 413) or ASKED in response.headers


def _invalid_upload_limit() -> str:
    """Return the limit on rejected web uploads per user (they cost no quota, so they are rate-limited)."""
    return str(current_app.config.get("WEB_INVALID_UPLOAD_RATELIMIT", "30 per hour"))


@bp.post("/phases/<id:phase_id>")
@login_required
@limiter.limit(_invalid_upload_limit, key_func=_uploader_key, deduct_when=_uncharged,
               override_defaults=False, error_message="Too many rejected uploads; fix the file and try again later.")
def upload(phase_id: int) -> Response | str | tuple[str, int] | tuple[str, int, dict[str, str]]:
    """Accept an uploaded prediction file and go to its submission page."""
    form = SubmissionForm()
    if not form.validate_on_submit():
        return _render_phase(phase_id, form), 400
    try:
        fields = uploads.form_fields(form)
        data = submissions.read_upload(form.file.data.stream, limit=ctx().settings.max_upload_bytes)
        partial = uploads.flag_partial(ctx(), phase_id=phase_id, user=_user(), data=data, fields=fields)
        if partial is not None:  # asked before it is charged: the file waits for the uploader's answer
            return _render_phase(phase_id, form, partial=partial), 200, {ASKED: "partial"}
        submission = uploads.accept(ctx(), phase_id=phase_id, user=_user(), data=data, fields=fields)
    except SubmissionInvalid as exc:
        return _render_phase(phase_id, form, invalid=exc.details), 400
    except QuotaExceeded as exc:
        return _render_phase(phase_id, form, quota_error=exc), 429
    except InvalidInput as exc:
        form.add_problems(exc)
        return _render_phase(phase_id, form), 400
    except Conflict as exc:  # a new method past max_methods, or the phase closed meanwhile
        form.show_refusal(exc)
        return _render_phase(phase_id, form, entry_error=exc), 409
    except Forbidden as exc:  # the email is not confirmed, or the organizers have not approved the uploader
        return _render_phase(phase_id, form, refusal=exc), 403
    return redirect(url_for("public.submission", submission_id=submission.id), code=303)


@bp.post("/phases/<id:phase_id>/confirm-upload")
@login_required
def confirm_upload(phase_id: int) -> Response | tuple[str, int]:
    """Submit the file the upload form asked about (it answers few items), as kept, then go to its submission."""
    form = SubmissionForm(formdata=None)
    if not ActionForm().validate_on_submit():
        return _render_phase(phase_id, form), 400
    try:
        submission = uploads.confirm(ctx(), phase_id=phase_id, user=_user(), token=request.form.get("kept", ""))
    except SubmissionInvalid as exc:
        return _render_phase(phase_id, form, invalid=exc.details), 400
    except QuotaExceeded as exc:
        return _render_phase(phase_id, form, quota_error=exc), 429
    except InvalidInput as exc:
        form.form_errors.append(exc.message)
        return _render_phase(phase_id, form), 400
    except Conflict as exc:
        return _render_phase(phase_id, form, entry_error=exc), 409
    except Forbidden as exc:
        return _render_phase(phase_id, form, refusal=exc), 403
    return redirect(url_for("public.submission", submission_id=submission.id), code=303)


@bp.post("/submissions/<id:submission_id>/<any(select, unselect):action>")
@login_required
def selection(submission_id: int, action: str) -> Response:
    """Select or unselect a submission for the final ranking, then go back to the phase page."""
    change = selections.select_submission if action == "select" else selections.unselect_submission
    try:
        item = change(ctx(), submission_id=submission_id, user=_user())
    except Conflict as exc:
        flash(exc.message, "error")
        item = get_submission(ctx(), submission_id=submission_id, viewer=_user())
    else:
        flash(f"Submission #{item.id} is {'now' if item.selected else 'no longer'} selected for the final ranking.",
              "success")
    return redirect(url_for("public.phase", phase_id=item.phase_id, _anchor="history"), code=303)


@bp.get("/phases/<id:phase_id>/leaderboard")
def leaderboard(phase_id: int) -> Response:
    """Show one view of a phase's ranking: paged, sorted, searched, filtered, with head/tail and breakdowns."""
    board = ranking.leaderboard(ctx(), phase_id=phase_id, viewer=_user(), query=page_query(request.args))
    note_shown_version(board.version)
    everyone = board.for_everyone()  # the shared body is rendered for no viewer: marks are filled in per request
    body = shared_body(("page", board.cache_key), lambda mark: _ranking_body(everyone, mark))
    mine = [row.mine for row in board.rows]
    return cached_page(board.cache_key, lambda: _viewer_page(board, body, mine))


def _viewer_page(board: Leaderboard, body: SharedBody, mine: list[bool]) -> str:
    """Return the ranking page with the viewer's rows marked; for a logged-in viewer, leave its parts for the cache."""
    frame = framed(lambda hole: render_template("public/leaderboard.html", phase=board.phase, ranking=hole))
    if current_user.is_authenticated:
        leave_parts(body, board.rows, competition_id=board.phase.competition_id, version=board.version,
                    marks=HTML_MARKS, frame=frame)
    return frame[0] + body.fill(mine, HTML_MARKS) + frame[1]


def _ranking_body(board: Leaderboard, mark: Marker) -> str:
    """Render the ranking's body for everyone (public/_ranking.html), its marks left to ``mark``."""
    page = board_page(ctx(), board)
    return render_template("public/_ranking.html", page=page, phase=board.phase, mark=mark,
                           board_url=url_for("public.leaderboard", phase_id=board.phase.id),
                           rows=RowPrinter(page, mark), curves=board_chart(board_curves(ctx(), board=board)))


@bp.get("/phases/<id:phase_id>/leaderboard/curves")
def leaderboard_curves(phase_id: int) -> Response:
    """Answer the popularity curves of the view's ranked entries asked for (?submissions=1,2), as shown to anyone."""
    board = ranking.leaderboard(ctx(), phase_id=phase_id, viewer=_user(), query=page_query(request.args))
    chosen = [int(part) for part in request.args.get("submissions", "").split(",")[:MAX_CURVES]
              if part.isdigit() and len(part) <= 9]
    return jsonify(board_chart(board_curves(ctx(), board=board, submission_ids=chosen)).payload())


@bp.get("/submissions/<id:submission_id>")
def submission(submission_id: int) -> str | Response:
    """Show one submission: status, scores with CIs, breakdowns, validation errors."""
    user = _user()
    try:
        sub = get_submission(ctx(), submission_id=submission_id, viewer=user)
    except NotFound:
        shown = public_submission(ctx(), submission_id=submission_id)
        if shown is not None:  # a ranked entry's submission on a closed public board: anyone reads its scores
            return _visitor_submission(*shown)
        if user is None:  # maybe their own, after the session expired
            return login_manager.unauthorized()
        raise
    results = submissions.visible_scores(ctx(), submission=sub, viewer=user)
    metadata = sub.entry_metadata or {}
    return render_template("public/submission.html", submission=sub, phase=sub.phase, results=results,
                           my_rows=_my_rows(sub, user), badges=badges(metadata), meta_url=metadata.get("url"),
                           place=submissions.place_in_line(ctx(), submission=sub))


def _visitor_submission(sub: Any, page: Any) -> str:
    """Render a ranked entry's submission to someone else: its scores as anyone sees them, no file, no notes."""
    results = submissions.visible_scores(ctx(), submission=sub, viewer=None)
    return render_template("public/submission.html", submission=sub, phase=sub.phase, results=results, my_rows=[],
                           badges=badges(sub.entry_metadata or {}), meta_url=(sub.entry_metadata or {}).get("url"),
                           place=None, visitor=page)


def _my_rows(sub: Any, user: Any) -> list[Any]:
    """Return the ranking rows of the viewer's entries when the submission is theirs or their team's."""
    if user is None or sub.is_baseline or not (sub.user_id == user.id or in_team(sub, user)):
        return []
    try:
        return ranking.viewer_entries(ctx(), phase_id=sub.phase_id, viewer=user)
    except Forbidden:  # the organizers keep the ranking hidden
        return []


def _render_phase(phase_id: int, form: SubmissionForm, **extra: Any) -> str:
    """Render the phase page with the caller's quota and history when logged in."""
    phase_row = get_phase(ctx(), phase_id)
    user = _user()
    status, history, methods, team, may_join = None, [], [], None, False
    if user is not None:
        status = quota.quota_status(ctx(), phase=phase_row, user=user)
        history = submissions.list_submissions(ctx(), phase_id=phase_id, user=user)
        methods = rules.previous_methods(ctx(), phase=phase_row, user=user)
        team = team_of(ctx(), competition_id=phase_row.competition_id, user_id=user.id)
        may_join = team is None and teams.may_join(ctx(), competition_id=phase_row.competition_id, user=user)
    shown = ladder.shown_primaries(ctx(), phase=phase_row, submissions=history)  # the ladder's values, not exact
    taking_part = participation.participation_state(ctx(), competition=phase_row.competition, user=user)
    unconfirmed = user is not None and confirmation.needs_confirmation(ctx(), user)
    return render_template("public/phase.html", phase=phase_row, form=form, quota=status, history=history,
                           extra_files=public_file_names(ctx(), phase_row),
                           taking_part=taking_part, unconfirmed=unconfirmed,
                           shown_primary=shown, feedback_rule=probing.feedback_rule(phase_row), methods=methods,
                           team=team, may_join=may_join, max_methods=rules.max_methods(phase_row),
                           final_selections=rules.final_selections(phase_row), action_form=ActionForm(), **extra)


def _selected_phase(phase_list: list[Any], wanted: int | None) -> Any:
    """Return the phase tab to show: the one asked for, else the first open one, else the latest."""
    by_id = {p.id: p for p in phase_list}
    if wanted in by_id:
        return by_id[wanted]
    open_now = [p for p in phase_list if phase_status(p) == "open"]
    return (open_now or phase_list or [None])[0 if open_now else -1]
