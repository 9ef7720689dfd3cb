"""Account pages: register, log in, log out, confirm the email address, and the logged-in user's profile."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user
from werkzeug.wrappers import Response

from leaderboard import accounts
from leaderboard.accounts import confirmation
from leaderboard.models import User
from leaderboard.platform import Conflict, InvalidInput, Unauthorized
from leaderboard.web import security
from leaderboard.web.context import ctx
from leaderboard.web.extensions import limiter
from leaderboard.web.forms import ActionForm, LoginForm, RegisterForm

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
            ctx(), email=form.email.data, password=form.password.data, display_name=form.display_name.data.strip(),
            confirm_link=_confirm_link,
        )
    except (Conflict, InvalidInput) as exc:
        form.form_errors.append(exc.message)
        return render_template("auth/register.html", form=form), 400
    _log_in(user)
    if confirmation.needs_confirmation(ctx(), user):
        flash(f"Welcome to Tailboard. We sent a link to {user.email}: open it to confirm your address, then you "
              "can submit.", "success")
    else:
        flash("Welcome to Tailboard. Your account is ready.", "success")
    return redirect(_next_url(), code=303)


@bp.get("/confirm/<token>")
def confirm_email(token: str) -> Response:
    """Confirm the address of the account a mailed link names (no login needed: the signed token says who)."""
    user = confirmation.confirm_email(ctx(), token=token[:500])
    flash(f"Your email address {user.email} is confirmed: you can submit.", "success")
    return redirect(url_for("auth.account" if current_user.is_authenticated else "auth.login"), code=303)


@bp.route("/account/confirm", methods=["GET", "POST"], endpoint="confirmation")
@login_required
@limiter.limit("5 per hour", methods=["POST"], key_func=lambda: f"user:{current_user.get_id()}")
def confirmation_page() -> Response | str:
    """Show whether the address is confirmed, and send the confirmation link again (POST)."""
    user, form = current_user._get_current_object(), ActionForm()
    if form.validate_on_submit():
        try:
            confirmation.resend(ctx(), user=user, link=_confirm_link)
        except Conflict as exc:
            flash(exc.message, "info")
        else:
            flash(f"A new confirmation link is on its way to {user.email}; it may take a minute.", "success")
        return redirect(url_for("auth.confirmation"), code=303)
    return render_template("account/confirm.html", user=user, form=form,
                           required=confirmation.confirmation_required(ctx()), link_days=confirmation.MAX_AGE.days)


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
    unconfirmed = confirmation.needs_confirmation(ctx(), current_user._get_current_object())
    return render_template("account/index.html", user=current_user, tokens=tokens, unconfirmed=unconfirmed)


def _confirm_link(token: str) -> str:
    """Return the absolute address of the confirmation page for a token (written into the mail)."""
    return url_for("auth.confirm_email", token=token, _external=True)


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
