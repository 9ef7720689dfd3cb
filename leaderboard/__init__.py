"""Tailboard's Flask application: ``create_app`` is the one composition root, a flat list of init and register calls.

It is the only module that may import every package: it builds the runtime with the
functions the domain needs injected (scoring a submission, refreshing a board, running a
job), then wires the web layer, the embedded workers and the command line onto the app.
docs/ARCHITECTURE.md maps the packages and what each may import.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from leaderboard.platform import Settings


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the WSGI application; ``config`` overrides Settings fields (tests)."""
    # Imported here, not at the top: ``import leaderboard.models`` (alembic's env.py, the
    # Celery worker) must not load the web stack. No cycle depends on it.
    from leaderboard import cli
    from leaderboard.board import CELLS_AHEAD, board_changed
    from leaderboard.operations import run_job
    from leaderboard.organizing import start_checks
    from leaderboard.platform import build_runtime
    from leaderboard.submissions import score_in_turn
    from leaderboard.web import api, context, converters, errors, security, templating
    from leaderboard.web.board_cache import BoardCache
    from leaderboard.web.extensions import csrf, limiter, login_manager
    from leaderboard.web.pages import auth, bundles, operations, organizer, participation, public, teams, tokens
    from leaderboard.web.pages import embeds as embed_pages
    from leaderboard.web.pages import entries as entry_pages
    from leaderboard.web.pages import notices as notice_pages
    from leaderboard.workers import job_worker, mail_sender, scorer, sweeper, webhook_sender

    settings = Settings.from_env(**(config or {}))
    app = Flask(__name__)
    converters.init_app(app)
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=settings.max_upload_bytes + 1024 * 1024,
        TESTING=settings.testing,
        RATELIMIT_STORAGE_URI=settings.ratelimit_storage_uri,
        RATELIMIT_ENABLED=True,
        API_RATELIMIT=settings.api_ratelimit,
        WTF_CSRF_TIME_LIMIT=None,
    )
    if settings.trusted_proxies:
        # Behind nginx every client is 127.0.0.1; trust its X-Forwarded-* so rate limits see real clients.
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore[method-assign]
    runtime = build_runtime(settings, score=score_in_turn, board_changed=board_changed, run_job=run_job,
                            board_cells=CELLS_AHEAD)
    context.init_app(app, runtime)
    app.wsgi_app = BoardCache(app.wsgi_app, runtime, app)  # type: ignore[method-assign]  # board reads
    scorer.init_app(app, runtime)  # before anything dispatches: embedded scoring off the request path
    sweeper.init_app(app, runtime)
    job_worker.init_app(app, runtime)
    mail_sender.init_app(app, runtime)
    webhook_sender.init_app(app, runtime)
    login_manager.init_app(app)
    csrf.init_app(app)
    limiter.init_app(app)
    errors.init_app(app)
    security.init_app(app, https=settings.https)
    templating.init_app(app)
    cli.init_app(app)
    app.register_blueprint(public.bp)
    app.register_blueprint(auth.bp)
    app.register_blueprint(organizer.bp, url_prefix="/organizer")
    app.register_blueprint(operations.bp, url_prefix="/organizer")
    app.register_blueprint(bundles.bp, url_prefix="/organizer")
    app.register_blueprint(participation.bp)
    app.register_blueprint(participation.organizer_bp, url_prefix="/organizer")
    api.init_app(app)
    app.register_blueprint(tokens.bp)
    app.register_blueprint(teams.bp)
    app.register_blueprint(notice_pages.bp)
    app.register_blueprint(notice_pages.organizer_bp, url_prefix="/organizer")
    app.register_blueprint(embed_pages.bp)
    app.register_blueprint(entry_pages.bp)
    if _serving():
        start_checks.init_app(app, runtime)
    return app


def _serving() -> bool:
    """Return whether this app is built to serve (gunicorn, ``flask run``, a test), not for one organizer command."""
    import sys

    import click

    # The app is built while flask's group is still looking up its command, so the command is read from argv.
    return click.get_current_context(silent=True) is None or "run" in sys.argv[1:]
