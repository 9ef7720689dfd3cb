"""Tailboard's Flask application: create_app wires settings, database, storage and views."""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from leaderboard.config import Settings


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the WSGI application; ``config`` overrides Settings fields (tests)."""
    from leaderboard import cli, errors, templating, web
    from leaderboard.extensions import csrf, limiter, login_manager
    from leaderboard.runtime import build_runtime
    from leaderboard.views import api, auth, organizer, public, tokens

    settings = Settings.from_env(**(config or {}))
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=settings.max_upload_bytes + 1024 * 1024,
        TESTING=settings.testing,
        RATELIMIT_STORAGE_URI=settings.ratelimit_storage_uri,
        RATELIMIT_ENABLED=True,
        WTF_CSRF_TIME_LIMIT=None,
    )
    if settings.trusted_proxies:
        # Behind nginx every client is 127.0.0.1; trust its X-Forwarded-* so rate limits see real clients.
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore[method-assign]
    web.init_app(app, build_runtime(settings))
    login_manager.init_app(app)
    csrf.init_app(app)
    limiter.init_app(app)
    errors.init_app(app)
    templating.init_app(app)
    cli.init_app(app)
    app.register_blueprint(public.bp)
    app.register_blueprint(auth.bp)
    app.register_blueprint(organizer.bp, url_prefix="/organizer")
    app.register_blueprint(api.bp, url_prefix="/api/v1")
    app.register_blueprint(tokens.bp)
    return app
