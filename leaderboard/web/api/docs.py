"""The generated OpenAPI document and a browsable page for it (vendored Swagger UI)."""

from __future__ import annotations

from flask import Response, current_app, jsonify, render_template

from leaderboard.web.api import schemas
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.openapi import build_document, operation

API_VERSION = "1.0.0"  # of the /api/v1 contract; additions bump the minor number


@bp.get("/openapi.json")
@operation("This OpenAPI 3.1 document", schemas.OpenApiDocument, tag="meta")
def openapi_document() -> Response:
    """Serve the OpenAPI document generated from the handlers and their models."""
    cache = current_app.extensions.setdefault("tailboard_openapi", {})
    if "document" not in cache:
        cache["document"] = build_document(current_app, version=API_VERSION)
    return jsonify(cache["document"])


@bp.get("/docs")
def docs_page() -> str:
    """Serve the browsable API reference."""
    return render_template("api/docs.html")

