"""Team pages (docs/ENTRIES.md): a competition's "your team" page (create or join), a team's page, leaving it."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, url_for
from flask_login import current_user, login_required
from werkzeug.wrappers import Response

from leaderboard.accounts import get_competition, team_of
from leaderboard.entries import teams
from leaderboard.platform import Conflict, InvalidInput, NotFound
from leaderboard.web.context import ctx
from leaderboard.web.forms import ActionForm, JoinTeamForm, TeamForm

bp = Blueprint("teams", __name__)


def _user() -> Any:
    """Return the logged-in User row."""
    return current_user._get_current_object()


@bp.get("/c/<slug>/team")
@login_required
def your_team(slug: str) -> Response | str:
    """Go to the user's team in a competition, or offer to create or join one."""
    competition = get_competition(ctx(), slug)
    team = team_of(ctx(), competition_id=competition.id, user_id=_user().id)
    if team is not None:
        return redirect(url_for("teams.team", team_id=team.id))
    return _choose(competition, TeamForm(), JoinTeamForm())


@bp.post("/c/<slug>/team")
@login_required
def create(slug: str) -> Response | tuple[str, int]:
    """Create a team in a competition with the user as its first member."""
    form = TeamForm()
    if form.validate_on_submit():
        try:
            team = teams.create_team(ctx(), competition_slug=slug, name=form.name.data, user=_user())
        except (Conflict, InvalidInput) as exc:
            form.name.errors = [*form.name.errors, exc.message]
        else:
            flash(f"Team “{team.name}” created. Share its invite code with your teammates.", "success")
            return redirect(url_for("teams.team", team_id=team.id), code=303)
    return _choose(get_competition(ctx(), slug), form, JoinTeamForm()), 400


@bp.post("/c/<slug>/team/join")
@login_required
def join(slug: str) -> Response | tuple[str, int]:
    """Join a team with its invite code."""
    form = JoinTeamForm()
    if form.validate_on_submit():
        try:
            team = teams.join_team(ctx(), invite_code=form.invite_code.data, user=_user())
        except (Conflict, NotFound) as exc:
            form.invite_code.errors = [*form.invite_code.errors, exc.message]
        else:
            flash(f"You joined “{team.name}”.", "success")
            return redirect(url_for("teams.team", team_id=team.id), code=303)
    return _choose(get_competition(ctx(), slug), TeamForm(), form), 400


@bp.get("/teams/<id:team_id>")
@login_required
def team(team_id: int) -> str:
    """Show a team: members; for members also the invite code, the entries and the leave button."""
    page = teams.team_page(ctx(), team_id=team_id, viewer=_user())
    return render_template("teams/team.html", page=page, action_form=ActionForm())


@bp.post("/teams/<id:team_id>/leave")
@login_required
def leave(team_id: int) -> Response:
    """Leave a team (refused once it has submitted)."""
    page = teams.team_page(ctx(), team_id=team_id, viewer=_user())
    try:
        teams.leave_team(ctx(), team_id=team_id, user=_user())
    except Conflict as exc:
        flash(exc.message, "error")
        return redirect(url_for("teams.team", team_id=team_id), code=303)
    flash(f"You left “{page.team.name}”.", "success")
    return redirect(url_for("teams.your_team", slug=page.competition.slug), code=303)


def _choose(competition: Any, create_form: TeamForm, join_form: JoinTeamForm) -> str:
    """Render the page offering to create or join a team in a competition."""
    return render_template("teams/choose.html", competition=competition, create_form=create_form,
                           join_form=join_form)
