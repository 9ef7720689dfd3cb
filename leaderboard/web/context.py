"""Per-request plumbing: the runtime on the app, one session per request, the current user."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, abort, current_app, g
from flask_login import current_user

from leaderboard.models import User
from leaderboard.platform import Runtime, ServiceContext
from leaderboard.web import security
from leaderboard.web.converters import MAX_ID
from leaderboard.web.extensions import login_manager

log = logging.getLogger(__name__)


def init_app(app: Flask, runtime: Runtime) -> None:
    """Attach runtime to app and close each request's session at teardown."""
    app.extensions["tailboard"] = runtime
    app.teardown_appcontext(_close_session)
    login_manager.user_loader(_load_user)
    login_manager.login_view = "auth.login"


def runtime() -> Runtime:
    """Return the runtime of the current app."""
    return current_app.extensions["tailboard"]


def ctx() -> ServiceContext:
    """Return the service context of the current request, opening its session once."""
    if "tailboard_ctx" not in g:
        rt = runtime()
        g.tailboard_ctx = rt.context(rt.sessions())
    return g.tailboard_ctx


def _close_session(exc: BaseException | None) -> None:
    context: ServiceContext | None = g.pop("tailboard_ctx", None)
    if context is None:
        return
    try:
        if exc is not None:
            context.session.rollback()
        context.session.close()
    except Exception:  # the answer is built: a lost connection must not turn it into an empty 500
        log.warning("closing the request's database session failed; dropping its connection", exc_info=True)
        try:
            context.session.invalidate()
        except Exception:  # the connection is gone already; the pool opens a new one
            log.warning("dropping the request's database connection failed", exc_info=True)


def _load_user(user_id: str) -> User | None:
    if not user_id.isdigit() or int(user_id) > MAX_ID:
        return None
    user = ctx().session.get(User, int(user_id))
    # A session cookie issued before the user's last logout no longer logs anyone in.
    return user if user is not None and security.session_is_current(user) else None


def organizers_only() -> Any:
    """A blueprint's before_request: send anonymous visitors to log in, refuse participants (403)."""
    if not current_user.is_authenticated:
        return login_manager.unauthorized()
    if not current_user.is_organizer:
        abort(403, "This page is for organizers.")
    return None


def current_organizer() -> User:
    """Return the logged-in organizer's User row: the actor of the organizer pages' service calls."""
    user: User = current_user._get_current_object()
    return user
