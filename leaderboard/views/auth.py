"""Account pages: register, log in, log out, and the logged-in user's profile."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user
from werkzeug.wrappers import Response

from leaderboard import security
from leaderboard.extensions import limiter
from leaderboard.forms import LoginForm, RegisterForm
from leaderboard.models import User
from leaderboard.services import accounts
from leaderboard.services.errors import Conflict, InvalidInput, Unauthorized
from leaderboard.web import ctx

bp = Blueprint("auth", __name__)


@bp.route("/register", methods=["GET", "POST"])
@limiter.limit("10 per minute", methods=["POST"])
def register() -> Response | str | tuple[str, int]:
    """Create a participant account and log it in."""
    form = RegisterForm()
    if not form.validate_on_submit():
        return render_template("auth/register.html", form=form), 400 if form.is_submitted() else 200
    try:
        user = accounts.register_user(
            ctx(), email=form.email.data, password=form.password.data, display_name=form.display_name.data.strip()
        )
    except (Conflict, InvalidInput) as exc:
        form.form_errors.append(exc.message)
        return render_template("auth/register.html", form=form), 400
    _log_in(user)
    flash("Welcome to Tailboard. Your account is ready.", "success")
    return redirect(_next_url(), code=303)


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit("10 per minute", methods=["POST"])
def login() -> Response | str | tuple[str, int]:
    """Log in with email and password."""
    form = LoginForm()
    if not form.validate_on_submit():
        return render_template("auth/login.html", form=form), 400 if form.is_submitted() else 200
    try:
        user = accounts.authenticate(ctx(), email=form.email.data, password=form.password.data)
    except Unauthorized:
        form.form_errors.append("The email or the password is wrong.")
        return render_template("auth/login.html", form=form), 401
    _log_in(user)
    return redirect(_next_url(), code=303)


@bp.post("/logout")
def logout() -> Response:
    """Log out (POST with a CSRF token, so no other site can log you out) and end the user's sessions."""
    if current_user.is_authenticated:
        accounts.end_sessions(ctx(), user=current_user._get_current_object())
    security.forget_session_version()
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("public.index"), code=303)


@bp.get("/account")
@login_required
def account() -> str:
    """Show the logged-in user's profile and their API tokens."""
    tokens = accounts.list_tokens(ctx(), user=current_user)
    return render_template("account/index.html", user=current_user, tokens=tokens)


def _log_in(user: User) -> None:
    """Start a session for user under their current session version."""
    login_user(user)
    security.remember_session_version(user)


def _next_url() -> str:
    """Return the local page to go to after logging in; never another site."""
    target = request.args.get("next") or ""
    parts = urlsplit(target)
    if target.startswith("/") and not target.startswith("//") and "\\" not in target and not parts.netloc:
        return target
    return url_for("public.index")
