"""The one place where domain errors become HTML pages or JSON ``{"error", "details"}``."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, current_app, jsonify, render_template, request
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
    details = _size_limit() if status == 413 and error.details is None else error.details
    response: Response
    if wants_json():
        response = jsonify({"error": error.message, "details": details})
    else:
        response = Response(
            render_template("error.html", status=status, message=error.message, details=details, back=_form_back()),
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
    details = None
    if status == 413:
        details = _size_limit()
        message = (f"The upload is larger than this instance accepts: {details['limit']} at most per file "
                   "(uncompressed).")
    if wants_json():
        response = jsonify({"error": message, "details": details})
    else:
        response = Response(render_template("error.html", status=status, message=message, details=details,
                                            back=_form_back()))
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


def _size_limit() -> dict[str, Any]:
    """Return the instance's upload limit, in bytes and in words ("100 MiB"), for a 413 answer."""
    limit = int(current_app.extensions["tailboard"].settings.max_upload_bytes)
    return {"limit_bytes": limit, "limit": size_text(limit)}


def size_text(n: int) -> str:
    """Return a byte count in words: 100 MiB, 1.5 MiB, 2 KiB, 900 bytes."""
    for unit, size in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if n >= size:
            return f"{round(n / size, 1):g} {unit}"
    return f"{n} bytes"


def _form_back() -> str | None:
    """Return the page of the form a failed POST came from (its own URL), None for any other request."""
    return request.path if request.method == "POST" and not wants_json() else None
