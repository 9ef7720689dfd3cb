"""Where the ranking is cached: the caches in front of the board, for anonymous readers.

``middleware.BoardCache`` answers anonymous board reads (pages and API) from a WSGI
micro-cache keyed by the board's state; ``watch.BoardWatch`` says when that state may
have changed (this process's commits, SQLite's shared stamp, PostgreSQL's LISTEN) so the
cache may skip its query; ``pages.cached_page`` keeps rendered answers by ETag. The board
itself is computed in leaderboard/board/ and served by web/pages/ and web/api/.
"""

from __future__ import annotations

from leaderboard.web.board_cache.middleware import BoardCache
from leaderboard.web.board_cache.pages import cached_page

__all__ = ["BoardCache", "cached_page"]
