"""The one place where domain errors become HTML pages or JSON ``{"error", "details"}``.

Outages of the platform's own parts are answered 503 with ``Retry-After``, never 500
(docs/RUNNING.md#errors): the object store failing (``StorageError``: nothing was
committed, so nothing is charged), and the database away or locked past its busy timeout
(``OperationalError``; an upload retried with its Idempotency-Key is never charged twice).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, current_app, g, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from sqlalchemy.exc import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException, InternalServerError

from leaderboard.platform import errors as domain
from leaderboard.platform.db import utcnow
from leaderboard.platform.sessions import rollback_quietly
from leaderboard.platform.storage.base import ObjectNotFound, StorageError

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
STORAGE_RETRY_AFTER = 30
"""Seconds a client is asked to wait after the object store failed."""
SCORING_RETRY_AFTER = 600
"""Seconds a client is asked to wait while a phase cannot score (its label file fails its check)."""
DATABASE_RETRY_AFTER = 5
"""Seconds a client is asked to wait after the database was away or locked."""
STORAGE_DOWN = ("File storage is unavailable right now, so nothing was stored and nothing was charged. "
                "Please try again in a minute.")
DATABASE_DOWN = ("The database is busy or unavailable right now. Please try again in a few seconds "
                 "(an upload retried with the same Idempotency-Key is never charged twice).")


def init_app(app: Flask) -> None:
    """Register the handlers for domain errors, HTTP errors and CSRF failures."""
    app.register_error_handler(domain.DomainError, _domain_error)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(StorageError, _storage_error)
    app.register_error_handler(OperationalError, _database_error)
    app.register_error_handler(InterfaceError, _database_error)


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
    if status == 503:  # scoring unavailable until an organizer restores the label file
        response.headers["Retry-After"] = str(SCORING_RETRY_AFTER)
    if isinstance(error, domain.QuotaExceeded) and error.resets_at is not None:
        response.headers["Retry-After"] = str(max(1, int((error.resets_at - utcnow()).total_seconds())))
    return response, status


def _storage_error(error: StorageError) -> tuple[Response, int] | tuple[str, int]:
    """Answer an object-store failure 503 with Retry-After (a missing object is a fault: 500)."""
    if isinstance(error, ObjectNotFound):
        log.error("a stored object is missing", exc_info=error)
        return _http_error(InternalServerError())
    log.warning("the object store failed during %s %s: %s", request.method, request.path, error)
    return _unavailable(STORAGE_DOWN, STORAGE_RETRY_AFTER, "storage")


def _database_error(error: OperationalError | InterfaceError) -> tuple[Response, int] | tuple[str, int]:
    """Answer the database away or locked 503 with Retry-After."""
    log.warning("the database failed during %s %s: %s", request.method, request.path, error.orig)
    context = g.get("tailboard_ctx")
    if context is not None:  # the page around the message may read the session again
        rollback_quietly(context.session)
    return _unavailable(DATABASE_DOWN, DATABASE_RETRY_AFTER, "database")


def _unavailable(message: str, retry_after: int, part: str) -> tuple[Response, int]:
    """Return a 503 answer saying which part is away and when to try again."""
    details = {"unavailable": part, "retry_after": retry_after}
    if wants_json():
        response = jsonify({"error": message, "details": details})
    else:
        try:
            page = render_template("error.html", status=503, message=message, details=None, back=_form_back())
        except Exception:  # the page's frame needs the database too: say it in plain text
            log.warning("rendering the 503 page failed; answering in plain text", exc_info=True)
            page = message
        response = Response(page, mimetype="text/html")
    response.status_code = 503
    response.headers["Retry-After"] = str(retry_after)
    return response, 503


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
