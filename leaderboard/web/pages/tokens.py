"""Personal API tokens on the account page: create (plaintext shown once), list, revoke."""

from __future__ import annotations

from flask import Blueprint, Response, flash, make_response, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required

from leaderboard import accounts
from leaderboard.web import context

bp = Blueprint("tokens", __name__)


@bp.post("/account/tokens")
@login_required
def create() -> Response:
    """Create a token and show its plaintext this once (never stored, never redirected)."""
    token, plaintext = accounts.create_token(context.ctx(), user=current_user, name=request.form.get("name", ""))
    response = make_response(render_template("account/token_created.html", token=token, plaintext=plaintext))
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/account/tokens/<id:token_id>/revoke")
@login_required
def revoke(token_id: int) -> ResponseReturnValue:
    """Revoke one of the user's tokens."""
    accounts.revoke_token(context.ctx(), user=current_user, token_id=token_id)
    flash("The token was revoked; scripts using it can no longer call the API.", "success")
    return redirect(url_for("auth.account") + "#api-tokens")
