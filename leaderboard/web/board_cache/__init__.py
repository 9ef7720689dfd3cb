"""Where the ranking is cached: the caches in front of the board (docs/RANKING.md#reads-under-a-rush).

``middleware.BoardCache`` answers anonymous board reads (pages and API) from a WSGI
micro-cache keyed by the board's state, and drops query parameters a board read does not
understand before anything sees them; ``watch.BoardWatch`` says when that state may
have changed (this process's commits, SQLite's shared stamp, PostgreSQL's LISTEN) so the
cache may skip its query; ``pages.cached_page`` keeps rendered answers by ETag;
``shared.shared_body`` keeps the ranking's body as everyone sees it, so a logged-in page
or a token's answer costs only its viewer's marks; ``viewers.ViewerReads`` answers those
reads in front of the app from the kept body, the viewer's marks and the page around it.
Every store is a ``lru.BoundedLru`` (entries and bytes). The board itself is computed in
leaderboard/board/ and served by web/pages/ and web/api/.
"""

from __future__ import annotations

from leaderboard.web.board_cache.middleware import BoardCache
from leaderboard.web.board_cache.pages import cached_page

__all__ = ["BoardCache", "cached_page"]
