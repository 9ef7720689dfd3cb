"""The one place where domain errors become HTML pages or JSON ``{"error", "details"}``."""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from leaderboard.platform import errors as domain
from leaderboard.platform.db import utcnow

log = logging.getLogger(__name__)

STATUS = {
    domain.InvalidInput: 400,
    domain.SubmissionInvalid: 400,
    domain.Unauthorized: 401,
    domain.Forbidden: 403,
    domain.NotFound: 404,
    domain.Conflict: 409,
    domain.TooLarge: 413,
    domain.QuotaExceeded: 429,
    domain.ScoringUnavailable: 503,
}


def init_app(app: Flask) -> None:
    """Register the handlers for domain errors, HTTP errors and CSRF failures."""
    app.register_error_handler(domain.DomainError, _domain_error)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(HTTPException, _http_error)


def wants_json() -> bool:
    """Return whether the current request is an API call."""
    return request.path.startswith("/api/")


def _status_of(error: domain.DomainError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


def _domain_error(error: domain.DomainError) -> tuple[Response, int] | tuple[str, int]:
    status = _status_of(error)
    response: Response
    if wants_json():
        response = jsonify({"error": error.message, "details": error.details})
    else:
        response = Response(
            render_template("error.html", status=status, message=error.message, details=error.details),
            mimetype="text/html",
        )
    response.status_code = status
    if isinstance(error, domain.QuotaExceeded) and error.resets_at is not None:
        response.headers["Retry-After"] = str(max(1, int((error.resets_at - utcnow()).total_seconds())))
    return response, status


def _csrf_error(error: CSRFError) -> tuple[Response, int]:
    return _http_error(error)


def _http_error(error: HTTPException) -> tuple[Response, int]:
    status = error.code or 500
    message = error.description or error.name
    if status == 413:
        message = "The upload is larger than this instance accepts."
    if wants_json():
        response = jsonify({"error": message, "details": None})
    else:
        response = Response(render_template("error.html", status=status, message=message, details=None))
    response.status_code = status
    # Keep what the exception says about itself: Allow on 405, Retry-After from the limiter.
    for name, value in error.get_headers():
        if name.lower() != "content-type":
            response.headers[name] = value
    if status == 429 and "Retry-After" not in response.headers:
        limit = getattr(error, "limit", None)
        seconds = getattr(getattr(limit, "limit", None), "get_expiry", lambda: None)()
        if seconds:
            response.headers["Retry-After"] = str(int(seconds))
    return response, status
