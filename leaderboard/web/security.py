"""Browser-facing protections: security headers, cookie flags, and sessions that end at logout.

The headers come from the app itself, so a directly exposed gunicorn (or a proxy that
forgets them) still sends them; nginx may repeat them. The Content-Security-Policy
allows scripts and styles from this origin only: no inline ``<script>``, no ``onclick``,
no ``style=""`` (templates use classes; scripts live under static/).

A login stores the user's ``session_version`` in the signed session cookie; logging
out bumps the version in the database, so a copy of the cookie taken before the logout
no longer loads the user. API tokens do not use the session and are unaffected.
"""

from __future__ import annotations

from flask import Flask, request, session
from werkzeug.wrappers import Response

from leaderboard.models import User

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",  # the empty favicon and Swagger UI's icons are data: URLs
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",  # no other site can frame an organizer's "Close phase" button
))
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # phase and submission URLs never leak to other sites
    "Cross-Origin-Opener-Policy": "same-origin",
}
FRAMABLE_ENDPOINTS = frozenset({"embeds.embed"})
"""The one page any site may frame: a board's public top entries (docs/MOVING.md#embeds-and-badges)."""
FRAMABLE_HEADERS = {**{k: v for k, v in HEADERS.items() if k != "X-Frame-Options"},
                    "Content-Security-Policy": CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'",
                                                                               "frame-ancestors *")}
HSTS = "max-age=31536000"  # one year; no includeSubDomains: sibling hosts are not ours to decide
SESSION_VERSION_KEY = "_session_version"


def init_app(app: Flask, *, https: bool) -> None:
    """Set the cookie flags and add the security headers to every response.

    ``https`` (TAILBOARD_HTTPS=1): the site is only served over HTTPS, so cookies are
    ``Secure`` and every response carries HSTS; without it HSTS is sent only on
    requests that arrived over HTTPS (request.is_secure, which trusts X-Forwarded-Proto
    only behind TAILBOARD_TRUSTED_PROXIES).
    """
    app.config.update(
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=https,
        SESSION_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_SECURE=https,
        REMEMBER_COOKIE_HTTPONLY=True,
    )

    def add_headers(response: Response) -> Response:
        for name, value in (FRAMABLE_HEADERS if request.endpoint in FRAMABLE_ENDPOINTS else HEADERS).items():
            response.headers.setdefault(name, value)
        if https or request.is_secure:
            response.headers.setdefault("Strict-Transport-Security", HSTS)
        return response

    app.after_request(add_headers)


def remember_session_version(user: User) -> None:
    """Record in the session which session version of the user it was opened under (call at login)."""
    session[SESSION_VERSION_KEY] = user.session_version


def forget_session_version() -> None:
    """Drop the session version from the session (call at logout)."""
    session.pop(SESSION_VERSION_KEY, None)


def session_is_current(user: User) -> bool:
    """Return whether this request's session was opened under the user's current session version.

    A session from before versions existed counts as version 0: it stays valid until
    the user's first logout, rather than logging everyone out at the upgrade.
    """
    return session.get(SESSION_VERSION_KEY, 0) == user.session_version
