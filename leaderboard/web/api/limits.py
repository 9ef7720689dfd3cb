"""Rate limits of the API, per token (or per address without one), separate from quotas.

Every call counts against API_RATELIMIT. Uploads answered 400 or 413 also count against
API_INVALID_UPLOAD_RATELIMIT: a rejected file costs no quota, so this is what stops a
script from hammering the validator. Both are Flask-Limiter strings read from the app
config, with the defaults below; the storage is the shared limiter's (memory, or Redis
when RATELIMIT_STORAGE_URI says so).
"""

from __future__ import annotations

import math
import time

from flask import Blueprint, Response, current_app

from leaderboard.web.api.auth import rate_limit_key
from leaderboard.web.extensions import limiter

DEFAULT_API_LIMIT = "300 per minute"
DEFAULT_INVALID_UPLOAD_LIMIT = "30 per hour"


def api_limit() -> str:
    """Return the limit on every API call of one token or address."""
    return str(current_app.config.get("API_RATELIMIT", DEFAULT_API_LIMIT))


def invalid_upload_limit() -> str:
    """Return the limit on rejected uploads of one token or address."""
    return str(current_app.config.get("API_INVALID_UPLOAD_RATELIMIT", DEFAULT_INVALID_UPLOAD_LIMIT))


def _rejected(response: Response) -> bool:
    return response.status_code in (400, 413)


invalid_uploads = limiter.limit(
    invalid_upload_limit,
    key_func=rate_limit_key,
    deduct_when=_rejected,
    override_defaults=False,
    error_message="Too many rejected uploads; fix the file and try again later.",
)


def init_blueprint(bp: Blueprint) -> None:
    """Limit every call of bp and add Retry-After / WWW-Authenticate where they belong."""
    limiter.limit(api_limit, key_func=rate_limit_key, error_message="Too many API calls; slow down.")(bp)
    bp.after_request(_headers)


def _headers(response: Response) -> Response:
    if response.status_code == 401:
        response.headers.setdefault("WWW-Authenticate", 'Bearer realm="tailboard"')
    if response.status_code == 429 and "Retry-After" not in response.headers:
        limit = limiter.current_limit
        if limit is not None:
            response.headers["Retry-After"] = str(max(1, math.ceil(limit.reset_at - time.time())))
    return response
