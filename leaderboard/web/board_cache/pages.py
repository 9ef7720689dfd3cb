"""Rendered answers kept per process for anonymous callers, with an ETag, keyed by what they show.

A ranking page (or its API answer, or its CSV) is the same for every anonymous caller
until its board changes, so its body is kept by (the board answer's cache key, the media
type, the request's path and query, the templates' stamp) and revalidated with
``If-None-Match``. Logged-in visitors and token callers see their own rows marked (and
their name in the menu): their answers are assembled every time, around the body kept
for everyone (board_cache/shared.py). Nothing here knows what a body holds: the caller's
key must change whenever the body would. At most ``SIZE`` answers and ``MAX_BYTES`` are kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from pathlib import Path

from flask import Response, request, session
from flask_login import current_user

from leaderboard.web.board_cache.lru import BoundedLru

SIZE = 256
MAX_BYTES = 64 * 1024 * 1024
_pages: BoundedLru[bytes] = BoundedLru(entries=SIZE, max_bytes=MAX_BYTES)
_ROOT = Path(__file__).resolve().parents[2]  # leaderboard/: its templates and stylesheets


def _stamp() -> str:
    """Return a digest of the templates' and stylesheets' names and times: a deploy changes every ETag."""
    parts = sorted(f"{p.relative_to(_ROOT)}:{p.stat().st_mtime_ns}" for folder in ("templates", "static/css")
                   for p in (_ROOT / folder).rglob("*") if p.is_file())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


STAMP = _stamp()


def cached_page(key: Hashable, render: Callable[[], str]) -> Response:
    """Return an HTML page for key: from the cache (or 304) for anonymous visitors, else freshly rendered."""
    personal = bool(current_user.is_authenticated or session.get("_flashes"))
    return cached_response(key, render, personal=personal, mimetype="text/html")


def cached_response(key: Hashable, render: Callable[[], str | bytes], *, personal: bool, mimetype: str,
                    headers: dict[str, str] | None = None) -> Response:
    """Return a response body for key: from the cache (or 304) unless it is personal, else freshly rendered."""
    extra = dict(headers or {})
    if personal:
        return Response(render(), mimetype=mimetype, headers={**extra, "Cache-Control": "private, no-cache"})
    etag = hashlib.sha256(repr((key, mimetype, request.full_path, STAMP)).encode()).hexdigest()[:32]
    extra.update({"ETag": f'"{etag}"', "Cache-Control": "no-cache", "Vary": "Cookie, Authorization"})
    if etag in request.if_none_match:
        return Response(status=304, headers=extra)
    body = _pages.get(etag)
    if body is None:
        made = render()
        body = made.encode("utf-8") if isinstance(made, str) else made
        _pages.put(etag, body, len(body))
    return Response(body, mimetype=mimetype, headers=extra)
