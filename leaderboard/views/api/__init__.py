"""The JSON API at /api/v1 (SPEC §5): bearer tokens, no cookies, no CSRF, OpenAPI from code.

Handlers live in one module per noun and each calls one service; errors become
``{"error", "details"}`` in leaderboard/errors.py.
"""

from __future__ import annotations

from flask import Blueprint
from flask.blueprints import BlueprintSetupState
from werkzeug.routing import IntegerConverter, Map

from leaderboard.extensions import csrf

MAX_ID = 2**31 - 1


class IdConverter(IntegerConverter):
    """A row id in a URL: 1 to 2**31-1, so an absurd id is a 404 rather than a database error."""

    def __init__(self, url_map: Map) -> None:
        super().__init__(url_map, min=1, max=MAX_ID)


def _add_id_converter(state: BlueprintSetupState) -> None:
    state.app.url_map.converters.setdefault("id", IdConverter)


bp = Blueprint("api", __name__)
bp.record_once(_add_id_converter)  # recorded before any route, so it runs before they are added
csrf.exempt(bp)  # the API authenticates with bearer tokens only, never the session cookie

from leaderboard.views.api import competitions, docs, limits, phases, submissions  # noqa: E402  (routes need bp)

limits.init_blueprint(bp)

__all__ = ["bp", "competitions", "docs", "phases", "submissions"]
