"""The JSON API at /api/v1 (docs/API.md): bearer tokens, no cookies, no CSRF, OpenAPI from code.

Handlers live in one module per noun and each calls one service; errors become
``{"error", "details"}`` in leaderboard/web/errors.py.
"""

from __future__ import annotations

from flask import Flask

# Each handler module registers its routes on the blueprint when imported.
from leaderboard.web.api import (  # noqa: F401
    baselines,
    competitions,
    docs,
    operations,
    participation,
    phases,
    results,
    submissions,
    teams,
)
from leaderboard.web.api.blueprint import bp


def init_app(app: Flask) -> None:
    """Mount the API blueprint, with every handler registered on it, at /api/v1."""
    app.register_blueprint(bp, url_prefix="/api/v1")
