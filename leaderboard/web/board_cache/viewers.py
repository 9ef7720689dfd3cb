"""Board reads of logged-in visitors and token callers, answered in front of the app: the shared body, their marks.

A logged-in participant's ranking page is the page everyone gets with their own rows
marked and their name in the menu; a token's JSON is the JSON everyone gets with ``mine``
filled in (board_cache/shared.py). When the app answers such a read it leaves what it
used in the request's environ (``BoardParts``: the body rendered for everyone, who owns
each shown row, and the page around the body as this viewer sees it). The micro-cache
keeps the body by the board's state (as for anonymous readers) and the page around it by
what it depends on, so the next read of any viewer costs: checking the session cookie's
signature (or the token's digest), one small query for who the viewer is now, one for
their teams when a shown row is a team's, and joining strings. No Flask request.

What a viewer's answer depends on, and how each is checked (each check is one small query,
remembered for ``REMEMBER_SECONDS``, one second: on PostgreSQL a query is two round trips,
which would cost a logged-in read three times an anonymous one):

- who they are: the session's ``_user_id`` and ``_session_version`` against the user's row
  (a logout elsewhere bumps the version: the next read goes to the app, which logs them
  out), or the token's digest against an unrevoked token; the menu's name and role
  are read from the same row and are part of the page-around key;
- their CSRF secret (the logout form): the page around is kept per session secret, and
  tokens never expire (``WTF_CSRF_TIME_LIMIT`` is None);
- their rows: marked from the owners kept with the body and the teams read now.

Anything else goes to the app as before: flashed messages, a permanent or remember-me
session, a session without a user, a token last noted more than a minute ago (the app
notes its use), a response that sets a cookie. A token's read counts against the API's
rate limit in the same bucket the app's limiter uses. ``ViewerReads.enabled`` turns the
path off (tests compare both).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import Flask, request
from itsdangerous import BadSignature
from limits import parse_many
from markupsafe import Markup
from sqlalchemy import Engine, bindparam, select
from werkzeug.http import parse_cookie

from leaderboard.models import ApiToken, TeamMember, User
from leaderboard.platform.db import utcnow
from leaderboard.web.board_cache.lru import BoundedLru
from leaderboard.web.board_cache.shared import SharedBody
from leaderboard.web.board_cache.wsgi import StartResponse, WsgiApp, call_app
from leaderboard.web.extensions import limiter

log = logging.getLogger(__name__)
PARTS = "tailboard.board_parts"
"""The environ key under which a board view leaves its BoardParts for the cache."""
TOKEN_PREFIX_HEADER = "bearer "
LAST_USED_RESOLUTION = timedelta(minutes=1)  # as accounts.users: a token's use is noted at most once a minute
API_ENDPOINT = "api.get_leaderboard"  # the limiter's scope of the board's API read
BODIES, BODY_BYTES = 256, 32 * 1024 * 1024
FRAMES, FRAME_BYTES = 4096, 32 * 1024 * 1024
CHECKED = 65536  # viewers, tokens and team lists remembered
REMEMBER_SECONDS = 1.0
"""How long a viewer's check (user row, token, teams) is trusted: a logout, revocation or new team shows within it."""

USER_NOW = select(User.display_name, User.is_organizer, User.session_version).where(User.id == bindparam("user_id"))
TOKEN_NOW = (select(ApiToken.user_id, ApiToken.last_used_at)
             .where(ApiToken.token_hash == bindparam("digest"), ApiToken.revoked_at.is_(None)))
TEAMS_NOW = select(TeamMember.team_id).where(TeamMember.user_id == bindparam("user_id"),
                                             TeamMember.competition_id == bindparam("competition_id"))



@dataclass(frozen=True)
class BoardParts:
    """What a board view used for a viewer's answer: the shared body, its rows' owners, the page around it."""

    body: SharedBody
    owners: tuple[tuple[int | None, int | None], ...]  # per shown row: (user id, team id); (None, None) a baseline
    competition_id: int
    version: int  # the board version the body shows
    marks: dict[str, str]
    unmarked: str
    frame: tuple[str, str] | None  # the page's text before and after the body; None for JSON (nothing around)


@dataclass(frozen=True)
class Viewer:
    """Who is reading, as the cache checked it: their user id and what the page around the body depends on."""

    user_id: int
    frame_key: tuple[Any, ...]
    bucket: str | None = None  # a token's API rate-limit bucket: its read counts there


@dataclass(frozen=True)
class KeptBody:
    """A board answer's shared part as kept by the board's state: body, owners, status and headers."""

    parts: BoardParts
    status: str
    headers: tuple[tuple[str, str], ...]  # without Content-Length


class ViewerReads:
    """Answer logged-in and token board reads from kept parts; keep the parts the app leaves."""

    def __init__(self, flask_app: Flask, engine: Engine) -> None:
        self.flask_app, self.engine = flask_app, engine
        self.bodies: BoundedLru[KeptBody] = BoundedLru(entries=BODIES, max_bytes=BODY_BYTES)
        self.frames: BoundedLru[tuple[bytes, bytes]] = BoundedLru(entries=FRAMES, max_bytes=FRAME_BYTES)
        self.checked: BoundedLru[tuple[float, Any]] = BoundedLru(entries=CHECKED, max_bytes=CHECKED)
        self.remember_seconds = REMEMBER_SECONDS
        self.enabled = True
        self.answered = 0  # reads answered here (tests and the bench read it)
        self.lock = threading.Lock()

    def identify(self, environ: dict[str, Any]) -> Viewer | None:
        """Return the viewer of a board read when this path may answer it, else None (the app answers)."""
        if not self.enabled:
            return None
        api = environ.get("PATH_INFO", "").startswith("/api/")
        if api:  # the API authenticates by token only and never looks at the session cookie
            return self._token_viewer(environ) if environ.get("HTTP_AUTHORIZATION") else None
        return None if environ.get("HTTP_AUTHORIZATION") else self._session_viewer(environ)

    def answer(self, viewer: Viewer, key: tuple[Any, ...], environ: dict[str, Any],
               start_response: StartResponse) -> Iterable[bytes] | None:
        """Send the viewer's answer from the kept parts, or return None when a part is missing."""
        kept = self.bodies.get(key)
        if kept is None:
            return None
        parts = kept.parts
        frame = (b"", b"") if parts.frame is None else self.frames.get(self._frame_key(viewer, key))
        if frame is None or (viewer.bucket is not None and not self._counted(viewer.bucket)):
            return None  # a missing part: the app answers; a full bucket: the app's limiter answers 429
        marks = {kind: text.encode("utf-8") for kind, text in parts.marks.items()}
        body = b"".join((frame[0], parts.body.fill_bytes(self._mine(viewer, parts), marks,
                                                         parts.unmarked.encode("utf-8")), frame[1]))
        start_response(kept.status, [*kept.headers, ("Content-Length", str(len(body)))])
        with self.lock:
            self.answered += 1
        return [body]

    def through_app(self, app: WsgiApp, viewer: Viewer, key: tuple[Any, ...], environ: dict[str, Any],
                    start_response: StartResponse) -> Iterable[bytes]:
        """Let the app answer; keep the parts it leaves when its answer is a 200 that sets no cookie."""
        status, headers, body = call_app(app, environ, start_response)
        parts: BoardParts | None = environ.get(PARTS)
        names = {name.lower() for name, _ in headers}
        if (parts is not None and status.startswith("200") and "set-cookie" not in names
                and parts.version == key[0][1]):
            kept_headers = tuple((k, v) for k, v in headers if k.lower() != "content-length")
            weight = 2 * sum(len(p) for p in parts.body.parts)  # its text and, once answered here, its UTF-8
            self.bodies.put(key, KeptBody(parts=parts, status=status, headers=kept_headers), weight)
            if parts.frame is not None:
                frame = (parts.frame[0].encode("utf-8"), parts.frame[1].encode("utf-8"))
                self.frames.put(self._frame_key(viewer, key), frame, len(frame[0]) + len(frame[1]))
        return [body]

    def _session_viewer(self, environ: dict[str, Any]) -> Viewer | None:
        """Return the logged-in user of the request's session cookie, checked against their row now, or None."""
        app = self.flask_app
        cookies = parse_cookie(environ)
        value = cookies.get(app.config["SESSION_COOKIE_NAME"])
        if not value or cookies.get(app.config.get("REMEMBER_COOKIE_NAME", "remember_token")):
            return None
        serializer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]
        if serializer is None:
            return None
        try:
            session = serializer.loads(value, max_age=int(app.permanent_session_lifetime.total_seconds()))
        except BadSignature:
            return None
        user_id = str(session.get("_user_id", ""))
        if not user_id.isdigit() or "_flashes" in session or session.get("_permanent") or "csrf_token" not in session:
            return None
        row = self._recall(("user", int(user_id)), USER_NOW, {"user_id": int(user_id)})
        if row is None or row.session_version != session.get("_session_version", 0):
            return None  # a session from before the user's last logout: the app logs it out
        return Viewer(user_id=int(user_id), frame_key=(int(user_id), row.display_name, row.is_organizer,
                                                       row.session_version, session["csrf_token"]))

    def _token_viewer(self, environ: dict[str, Any]) -> Viewer | None:
        """Return the owner of the request's bearer token when it is valid and its use noted lately, or None."""
        header = environ.get("HTTP_AUTHORIZATION", "").strip()
        if not header.lower().startswith(TOKEN_PREFIX_HEADER) or not header[7:].strip():
            return None
        token = header[7:].strip()
        digest = hashlib.sha256(token.encode()).hexdigest()
        row = self._recall(("token", digest), TOKEN_NOW, {"digest": digest})
        if row is None or not _noted_lately(row.last_used_at):
            if row is not None:  # the app notes its use now: read the token afresh next time
                self.checked.put(("token", digest), (0.0, None), 1)
            return None  # unknown or revoked (the app answers 401), or its use is due to be noted (the app notes it)
        return Viewer(user_id=row.user_id, frame_key=("token", row.user_id), bucket=_bucket(token))

    def _recall(self, key: tuple[Any, ...], query: Any, params: dict[str, Any], *, every: bool = False) -> Any:
        """Return query's first row (or every row) as read at most ``remember_seconds`` ago, reading it when older."""
        now = time.monotonic()
        found = self.checked.get(key) if self.remember_seconds > 0 else None
        if found is not None and found[0] > now:
            return found[1]
        with self.engine.connect() as connection:
            result = connection.execute(query, params)
            value = tuple(result) if every else result.first()
        if self.remember_seconds > 0:
            self.checked.put(key, (now + self.remember_seconds, value), 1)
        return value

    def _counted(self, bucket: str) -> bool:
        """Return whether the read was counted within the token's rate limit (False also when the count failed)."""
        try:
            return self._within_rate_limit(bucket)
        except Exception:  # e.g. Redis away: the app's limiter decides (and says so) for this read
            log.warning("counting a token's board read failed; the app answers it", exc_info=True)
            return False

    def _within_rate_limit(self, bucket: str) -> bool:
        """Count this read in the token's API bucket (the app limiter's own key); return whether it is allowed."""
        if not self.flask_app.config.get("RATELIMIT_ENABLED", True):
            return True
        limits = parse_many(str(self.flask_app.config.get("API_RATELIMIT", "300 per minute")))
        # Tested against the app's own count (tests/web/test_viewer_reads.py): a read answered here and one
        # answered by the app share the bucket. A breach goes on to the app, whose limiter answers 429.
        prefix = self.flask_app.config.get("RATELIMIT_KEY_PREFIX", "")
        names = [prefix, bucket, API_ENDPOINT] if prefix else [bucket, API_ENDPOINT]
        return all([limiter.limiter.hit(limit, *names) for limit in limits])  # one round trip each (Redis)

    def _frame_key(self, viewer: Viewer, key: tuple[Any, ...]) -> tuple[Any, ...]:
        """Return the key of the page around the body: the viewer as checked, the phase's name, path and stamp.

        Not the board's version: the page around the body outlives every score recorded.
        """
        state, path, _, stamp = key
        phase_id, _version, _status, name = state[:4]
        return (*viewer.frame_key, phase_id, name, path, stamp)

    def _mine(self, viewer: Viewer, parts: BoardParts) -> list[bool]:
        """Return, per shown row, whether it is the viewer's: their own, or their team's (read now)."""
        teams: frozenset[int] = frozenset()
        if any(team is not None for _, team in parts.owners):
            found = self._recall(("teams", viewer.user_id, parts.competition_id), TEAMS_NOW,
                                 {"user_id": viewer.user_id, "competition_id": parts.competition_id}, every=True)
            teams = frozenset(row.team_id for row in found)
        return [(user is not None and user == viewer.user_id) or (team is not None and team in teams)
                for user, team in parts.owners]


def _noted_lately(last_used_at: datetime | None) -> bool:
    """Return whether a token's last noted use is recent enough that this read need not note it again."""
    return last_used_at is not None and utcnow() - last_used_at < LAST_USED_RESOLUTION


def framed(render: Callable[[Markup], str]) -> tuple[str, str]:
    """Return the page render(hole) draws around its body, cut at the hole (a fresh random marker)."""
    hole = f"tbhole{secrets.token_hex(12)}x"
    before, found, after = render(Markup(hole)).partition(hole)
    if not found:
        raise ValueError("the page does not show its body")
    return before, after


def leave_parts(body: SharedBody, rows: Sequence[Any], *, competition_id: int, version: int, marks: dict[str, str],
                unmarked: str = "", frame: tuple[str, str] | None = None) -> None:
    """Leave, for the micro-cache in front of the app, what this board answer for a viewer was made of."""
    owners = tuple((None, None) if row.is_baseline else (row.user_id, row.team_id) for row in rows)
    request.environ[PARTS] = BoardParts(body=body, owners=owners, competition_id=competition_id, version=version,
                                        marks=marks, unmarked=unmarked, frame=frame)


def _bucket(token: str) -> str:
    """Return a token's rate-limit bucket, as the API's limiter names it (web/api/auth.rate_limit_key)."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:32]
