"""Who is calling: the user of the request's bearer token, resolved once per request.

The API never looks at the session cookie: it is exempt from CSRF, so only a token
(which a foreign site cannot attach) may authenticate a call.
"""

from __future__ import annotations

import hashlib

from flask import g, request

from leaderboard import accounts
from leaderboard.models import User
from leaderboard.platform import Forbidden, Unauthorized
from leaderboard.web import context

_ANONYMOUS = object()


def bearer_token() -> str | None:
    """Return the token of the Authorization header, None when there is none."""
    header = request.headers.get("Authorization", "").strip()
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Send the token as 'Authorization: Bearer <token>'.")
    return token.strip()


def current_user() -> User | None:
    """Return the token's user, None for anonymous calls; Unauthorized for a bad token."""
    cached = g.get("api_user", _ANONYMOUS)
    if cached is not _ANONYMOUS:
        return cached  # type: ignore[return-value]
    token = bearer_token()
    user = None
    if token is not None:
        user = accounts.user_for_token(context.ctx(), token)
        if user is None:
            raise Unauthorized("The API token is invalid or has been revoked.")
    g.api_user = user
    return user


def require_user() -> User:
    """Return the calling user; Unauthorized when the call carries no token."""
    user = current_user()
    if user is None:
        raise Unauthorized("This call needs an API token: 'Authorization: Bearer <token>'.")
    return user


def require_organizer() -> User:
    """Return the calling organizer; Forbidden for participants."""
    user = require_user()
    if not user.is_organizer:
        raise Forbidden("Only organizers may do this.")
    return user


def rate_limit_key() -> str:
    """Return the rate-limit bucket of the call: its token's digest, else its address."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer ") and header[7:].strip():
        return "token:" + hashlib.sha256(header[7:].strip().encode()).hexdigest()[:32]
    return "ip:" + (request.remote_addr or "unknown")
