"""Participation approval pages: a participant asks to take part; the competition's organizers approve or refuse."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from werkzeug.wrappers import Response

from leaderboard.accounts import managed_competition, participation
from leaderboard.platform import Conflict
from leaderboard.web import context
from leaderboard.web.context import ctx
from leaderboard.web.forms import ActionForm

bp = Blueprint("participation", __name__)
organizer_bp = Blueprint("participants", __name__)
organizer_bp.before_request(context.organizers_only)


@bp.post("/c/<slug>/participation")
@login_required
def ask(slug: str) -> Response:
    """Ask to take part in a competition that requires approval, then go back to its page (or the phase's)."""
    form = ActionForm()
    if form.validate_on_submit():
        try:
            state = participation.request_participation(ctx(), slug=slug, user=current_user._get_current_object())
        except Conflict as exc:
            flash(exc.message, "info")
        else:
            flash("Your request to take part is sent; you can submit once the organizers approve it."
                  if state.status == participation.PENDING else f"Your request is {state.status}.", "success")
    phase_id = request.args.get("phase", type=int)
    target = url_for("public.phase", phase_id=phase_id) if phase_id else url_for("public.competition", slug=slug)
    return redirect(target, code=303)


@organizer_bp.get("/c/<slug>/participants")
def participants(slug: str) -> str:
    """List the requests to take part in a competition, pending first, with approve and refuse buttons."""
    competition = managed_competition(ctx(), slug=slug, actor=context.current_organizer())
    rows = participation.list_participants(ctx(), slug=slug, actor=context.current_organizer())
    return render_template("organizer/participants.html", competition=competition, participants=rows,
                           action_form=ActionForm(), rule=participation.approval_rule(competition))


@organizer_bp.post("/c/<slug>/participants/<id:user_id>/<any(approve, refuse):decision>")
def decide(slug: str, user_id: int, decision: str) -> Response:
    """Approve or refuse one request (CSRF-protected), then go back to the list."""
    form = ActionForm()
    if form.validate_on_submit():
        row = participation.decide(ctx(), slug=slug, user_id=user_id, approve=decision == "approve",
                                   actor=context.current_organizer())
        flash(f"{row.display_name} is {row.status}.", "success")
    return redirect(url_for("participants.participants", slug=slug), code=303)
