"""Per-request plumbing: the runtime on the app, one session per request, the current user."""

from __future__ import annotations

from flask import Flask, current_app, g

from leaderboard.extensions import login_manager
from leaderboard.models import User
from leaderboard.runtime import Runtime, ServiceContext


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
    if exc is not None:
        context.session.rollback()
    context.session.close()


def _load_user(user_id: str) -> User | None:
    if not user_id.isdigit():
        return None
    return ctx().session.get(User, int(user_id))
