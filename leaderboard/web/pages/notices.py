"""Notification pages (docs/NOTIFY.md): the account's mail switch, a phase's announcements, a competition's webhooks."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, make_response, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from werkzeug.wrappers import Response

from leaderboard.accounts import managed_competition, managed_phase
from leaderboard.notify import announcements, mail_enabled, preferences, webhooks
from leaderboard.organizing import notifications
from leaderboard.platform import Conflict, InvalidInput
from leaderboard.web import context
from leaderboard.web.context import ctx
from leaderboard.web.forms import ActionForm

bp = Blueprint("notices", __name__)
organizer_bp = Blueprint("organizer_notices", __name__)
organizer_bp.before_request(context.organizers_only)


@bp.app_context_processor
def _mail_switch() -> dict[str, Any]:
    """Give templates ``submission_mail_on(user)`` (the account page's checkbox)."""
    return {"submission_mail_on": lambda user: preferences.submission_mail_on(ctx().session, user_id=user.id)}


@bp.post("/account/notifications")
@login_required
def save_preferences() -> Response:
    """Turn the mails about one's own submissions on or off (CSRF-protected)."""
    if ActionForm().validate_on_submit():
        on = request.form.get("submission_mail") == "on"
        preferences.set_submission_mail(ctx().session, user_id=current_user.id, on=on)
        flash("Submission mails are " + ("on." if on else "off."), "success")
    return redirect(url_for("auth.account") + "#notifications", code=303)


@organizer_bp.route("/phases/<id:phase_id>/announce", methods=["GET", "POST"])
def announce(phase_id: int) -> Response | str | tuple[str, int]:
    """Show the audiences with how many each reaches; send an announcement to one of them."""
    me = context.current_organizer()
    phase = managed_phase(ctx(), phase_id=phase_id, actor=me)
    form = ActionForm()
    values = {"audience": request.form.get("audience", "submitted"), "subject": request.form.get("subject", ""),
              "body": request.form.get("body", "")}
    problem = None
    if request.method == "POST" and form.validate_on_submit():
        try:
            sent = notifications.announce(ctx(), phase_id=phase_id, actor=me, **values)
        except (InvalidInput, Conflict) as exc:
            problem = exc.message
        else:
            flash(f"The announcement is on its way to {sent} people.", "success")
            return redirect(url_for("organizer_notices.announce", phase_id=phase_id), code=303)
    counts = notifications.audience_counts(ctx(), phase_id=phase_id, actor=me)
    page = render_template("organizer/announce.html", phase=phase, competition=phase.competition, form=form,
                           counts=counts, audiences=announcements.AUDIENCES, values=values, problem=problem,
                           mail_on=mail_enabled(ctx().settings))
    return (page, 400) if problem else page


@organizer_bp.route("/c/<slug>/webhooks", methods=["GET", "POST"])
def webhooks_page(slug: str) -> Response | str | tuple[str, int]:
    """List the competition's webhooks and their delivery log; register one (its secret is shown this once)."""
    me = context.current_organizer()
    competition = managed_competition(ctx(), slug=slug, actor=me)
    form = ActionForm()
    created, problem = None, None
    if request.method == "POST" and form.validate_on_submit():
        try:
            created = notifications.register_webhook(ctx(), slug=slug, url=request.form.get("url", ""),
                                                     events=request.form.getlist("events"), actor=me)
        except InvalidInput as exc:
            problem = exc.message
    views = notifications.list_webhooks(ctx(), slug=slug, actor=me)
    response = make_response(render_template(
        "organizer/webhooks.html", competition=competition, views=views, form=form, events=webhooks.EVENTS,
        created=created, problem=problem, header=webhooks.SIGNATURE_HEADER), 400 if problem else 200)
    response.headers["Cache-Control"] = "no-store"  # a new secret is on this page once
    return response


@organizer_bp.post("/webhooks/<id:webhook_id>/delete")
def delete_webhook(webhook_id: int) -> Response:
    """Delete one webhook and its delivery log, then go back to the list."""
    slug = request.form.get("slug", "")
    if ActionForm().validate_on_submit():
        notifications.delete_webhook(ctx(), webhook_id=webhook_id, actor=context.current_organizer())
        flash("The webhook was deleted.", "success")
    return redirect(url_for("organizer_notices.webhooks_page", slug=slug), code=303)
