"""A micro-cache in front of the app for anonymous reads of a board (the ranking page and its API answer).

What an anonymous reader gets from ``GET /phases/<id>/leaderboard`` or
``GET /api/v1/phases/<id>/leaderboard`` depends only on the board's version, the phase as
shown (name, status, competition title) and the query string (ranking.anonymous_key),
so each process keeps the last such responses, headers included, and answers a repeated
read with at most one small query and no Flask request at all (304 when the ETag matches).
Query parameters a board read does not understand (``?utm=...``) are dropped from every
board read's query string before the app or a key sees them (``canonical_query``), so
they never make a new entry. A request with a cookie or an Authorization header is a
viewer's read: board_cache/viewers.py answers it from the body kept for everyone plus the
viewer's marks and the page around it as they see it, or lets the app answer and keeps the
parts the app leaves. A board with changes pending, or anything else, goes to the app; an
anonymous response is kept only when the app marked it shareable
(an ETag from board_cache/pages.py, no Set-Cookie). Like nginx's proxy cache, but it knows
when the board moved: it remembers a board's state until web/board_cache/watch.py says it may
have changed (on SQLite, at once from any process on the host; on PostgreSQL, this
process's commits at once and other processes' when their NOTIFY arrives), and asks the
database (one Core query) whenever it cannot trust what it remembers.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from flask import Flask, request
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from leaderboard.board import QUERY_KEYS, anonymous_key, anonymous_row
from leaderboard.platform import Runtime
from leaderboard.web.board_cache.lru import BoundedLru
from leaderboard.web.board_cache.pages import STAMP
from leaderboard.web.board_cache.viewers import ViewerReads
from leaderboard.web.board_cache.watch import MAX_AGE_SECONDS, BoardWatch
from leaderboard.web.board_cache.wsgi import StartResponse, WsgiApp, call_app
from leaderboard.web.converters import MAX_ID, decimal_range_regex

log = logging.getLogger(__name__)
BOARD_PATH = re.compile(rf"^(?:/api/v1)?/phases/({decimal_range_regex(MAX_ID)})/leaderboard$")
SIZE = 512
MAX_BYTES = 64 * 1024 * 1024  # the kept responses' bodies, in all
MAX_QUERY = 1024  # a longer query string (after dropping unknown parameters) is answered but not kept
Stored = tuple[str, list[tuple[str, str]], bytes, str]  # status, headers, body, etag
SHOWN_VERSION = "tailboard.board_version"  # environ: the board version the app's answer shows (note_shown_version)


def note_shown_version(version: int) -> None:
    """Say which board version the answer being built shows: the cache keeps it under that version only.

    A board read may show the version before the one in the database while this process
    loads the new one (board/read.py ``load_view``); kept under the new version's key, it
    would be served until the next version.
    """
    request.environ[SHOWN_VERSION] = version



def _state_engine(runtime: Runtime) -> Engine:
    """Return the engine for the one-query state check of every anonymous board read.

    On PostgreSQL its connections run in autocommit on the runtime's pool: two round trips
    per check (the pool's ping, the SELECT) instead of four (ping, BEGIN, SELECT, ROLLBACK).
    SQLite has no round trips: it uses the runtime's engine as it is.
    """
    if runtime.engine.dialect.name != "postgresql":
        return runtime.engine
    return runtime.engine.execution_options(isolation_level="AUTOCOMMIT")


class BoardCache:
    """WSGI middleware serving anonymous board reads from a per-process cache keyed by the board's state."""

    def __init__(self, app: WsgiApp, runtime: Runtime, flask_app: Flask | None = None) -> None:
        self.app, self.runtime = app, runtime
        self.engine = _state_engine(runtime)
        self.watch = BoardWatch(runtime.engine)
        self.memo: dict[int, tuple[Any, float, Any]] = {}  # phase -> (watch generation, valid until, anonymous_row)
        self.stored: BoundedLru[Stored] = BoundedLru(entries=SIZE, max_bytes=MAX_BYTES)
        self.lock = threading.Lock()
        self.filling: dict[tuple[Any, ...], threading.Lock] = {}
        self.viewers = None if flask_app is None else ViewerReads(flask_app, self.engine)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Answer a cached anonymous board read, or pass the request to the app (keeping a shareable answer)."""
        found = BOARD_PATH.match(environ.get("PATH_INFO", ""))
        if found is None or environ.get("REQUEST_METHOD") != "GET":
            return self.app(environ, start_response)
        environ["QUERY_STRING"] = canonical_query(environ.get("QUERY_STRING", ""))
        if len(environ["QUERY_STRING"]) > MAX_QUERY:
            return self.app(environ, start_response)
        if environ.get("HTTP_COOKIE") or environ.get("HTTP_AUTHORIZATION"):
            return self._for_viewer(int(found.group(1)), environ, start_response)
        state = self._safe_state(int(found.group(1)))
        if state is None:
            return self.app(environ, start_response)
        key = (state, environ.get("PATH_INFO"), environ.get("QUERY_STRING", ""), STAMP)
        hit = self._kept(key)
        if hit is not None:
            return self._answer(hit, environ, start_response)
        with self.lock:  # one thread builds a missing answer; the others asking for it wait and share it
            flight = self.filling.setdefault(key, threading.Lock())
        with flight:
            hit = self._kept(key)
            if hit is not None:
                return self._answer(hit, environ, start_response)
            try:
                return self._fill(key, environ, start_response)
            finally:
                with self.lock:
                    self.filling.pop(key, None)

    def _for_viewer(self, phase_id: int, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Answer a logged-in or token board read from kept parts (board_cache/viewers.py), else through the app."""
        if self.viewers is None:
            return self.app(environ, start_response)
        state = self._safe_state(phase_id)
        try:
            viewer = None if state is None else self.viewers.identify(environ)
        except SQLAlchemyError:
            log.warning("the board cache could not check the reader; passing the request on", exc_info=True)
            viewer = None
        if state is None or viewer is None:
            return self.app(environ, start_response)
        key = (state, environ.get("PATH_INFO"), environ.get("QUERY_STRING", ""), STAMP)
        try:
            answered = self.viewers.answer(viewer, key, environ, start_response)
        except SQLAlchemyError:
            log.warning("the board cache could not read the reader's teams; passing the request on", exc_info=True)
            answered = None
        if answered is not None:
            return answered
        return self.viewers.through_app(self.app, viewer, key, environ, start_response)

    def _safe_state(self, phase_id: int) -> tuple[Any, ...] | None:
        """Return the board's state key, or None when it cannot be read (the app's own path copes)."""
        try:
            return self._state(phase_id)
        except SQLAlchemyError:  # e.g. a connection the database dropped: the app's own path copes (pre-ping)
            log.warning("the board cache could not read the board's state; passing the request on", exc_info=True)
            return None

    def _state(self, phase_id: int) -> tuple[Any, ...] | None:
        """Return the board state key of phase_id: remembered while the watch says nothing moved, else queried."""
        watch = self.watch
        trusted, generation = watch.listening, watch.generation  # read before the query: a change moves it
        memo = self.memo.get(phase_id) if trusted else None
        if memo is not None and memo[0] == generation and time.monotonic() < memo[1]:
            return anonymous_key(phase_id, memo[2])
        watch.start()
        with self.engine.connect() as connection:
            row = anonymous_row(connection, phase_id=phase_id)
        if trusted and row is not None:
            if len(self.memo) >= SIZE:
                self.memo.clear()
            self.memo[phase_id] = (generation, time.monotonic() + MAX_AGE_SECONDS, row)
        return anonymous_key(phase_id, row)

    def _kept(self, key: tuple[Any, ...]) -> Stored | None:
        """Return the kept answer for key (marking it recently used), or None."""
        return self.stored.get(key)

    def _answer(self, hit: Stored, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Send a kept response, or 304 when the client has it already."""
        status, headers, body, etag = hit
        if etag and etag in environ.get("HTTP_IF_NONE_MATCH", ""):
            start_response("304 NOT MODIFIED", [(k, v) for k, v in headers if k.lower() not in ("content-length",
                                                                                                   "content-type")])
            return [b""]
        start_response(status, headers)
        return [body]

    def _fill(self, key: tuple[Any, ...], environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Call the app; keep its answer when it is a shareable 200."""
        status, headers, body = call_app(self.app, environ, start_response)
        names = {k.lower(): v for k, v in headers}
        if (status.startswith("200") and "etag" in names and "set-cookie" not in names
                and environ.get(SHOWN_VERSION) == key[0][1]):  # not a moment-older version, shown while one loads
            self.stored.put(key, (status, headers, body, names["etag"]), len(body))
        return [body]


def canonical_query(query: str) -> str:
    """Return a board read's query string with only the parameters it understands, sorted by name.

    Unknown parameters (``?utm=...``) change nothing a board read answers, so they are
    dropped before the app or any cache key sees them: they never make a new cache entry.
    Repeated names keep their order (the first one counts), values are kept as sent.
    """
    if not query:
        return ""
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k in QUERY_KEYS]
    return urlencode(sorted(pairs, key=lambda pair: pair[0]))
