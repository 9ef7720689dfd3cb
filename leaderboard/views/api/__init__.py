"""The JSON API at /api/v1 (SPEC §5): bearer tokens, no cookies, no CSRF, OpenAPI from code.

Handlers live in one module per noun and each calls one service; errors become
``{"error", "details"}`` in leaderboard/errors.py.
"""

from __future__ import annotations

from flask import Blueprint

from leaderboard.extensions import csrf

bp = Blueprint("api", __name__)
csrf.exempt(bp)  # the API authenticates with bearer tokens only, never the session cookie

from leaderboard.views.api import competitions, docs, limits, phases, submissions  # noqa: E402  (routes need bp)

limits.init_blueprint(bp)

__all__ = ["bp", "competitions", "docs", "phases", "submissions"]
