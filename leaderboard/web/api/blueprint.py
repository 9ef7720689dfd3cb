"""The API's blueprint: bearer tokens only (no cookies, so no CSRF), rate-limited per token.

Each handler module (competitions, docs, phases, submissions) registers its routes on
``bp``; ``leaderboard.web.api.init_app`` imports them all and mounts it at /api/v1.
Ids in paths use the app's ``id`` converter (leaderboard/web/converters.py).
"""

from __future__ import annotations

from flask import Blueprint

from leaderboard.web.api import limits
from leaderboard.web.extensions import csrf

bp = Blueprint("api", __name__)
csrf.exempt(bp)  # the API authenticates with bearer tokens only, never the session cookie
limits.init_blueprint(bp)
