"""The leaderboard, computed (docs/RANKING.md): a materialized board per phase, refreshed when it changes.

``changes.board_changed`` is the one door writers reach through ``ctx.board_changed``
(and ``cells.CELLS_AHEAD`` a re-score's, through ``ctx.runtime.board_cells``);
``versions`` announces and refreshes a board under a per-phase lock; ``layout`` names a
phase's views and the figures its cells keep; ``cells``, ``build``, ``rank``, ``stats`` and
``refresh`` compute it; ``ranking`` answers a board query (``Leaderboard``, ``BoardQuery``)
from ``read``; ``page``, ``curves``, ``export`` and ``across_phases`` shape what the pages
and the API show; ``rules`` says the ranking rule in words;
``entry_page`` and ``compare`` shape an entry's page and two submissions side by side. May import disclosure,
entries, phase_data, accounts, notify, models and platform; never submissions. Only the
entry points (web, workers, cli) and the composition root import it.
"""

from __future__ import annotations

from leaderboard.board.across_phases import AcrossBoard, AcrossQuery
from leaderboard.board.cells import CELLS_AHEAD
from leaderboard.board.changes import board_changed
from leaderboard.board.curves import MAX_CURVES, BoardCurves, board_curves
from leaderboard.board.export import board_csv
from leaderboard.board.layout import headtail_metric, path_label, phase_views
from leaderboard.board.page import badges, board_page
from leaderboard.board.ranking import (
    DEFAULT_PER_PAGE,
    FLAG_FILTERS,
    MAX_PER_PAGE,
    QUERY_KEYS,
    BoardQuery,
    Leaderboard,
    anonymous_key,
    anonymous_row,
)
from leaderboard.board.read import ShownRow
from leaderboard.board.versions import rebuild_from_scratch

__all__ = [
    "AcrossBoard", "AcrossQuery", "BoardCurves", "BoardQuery", "CELLS_AHEAD", "DEFAULT_PER_PAGE", "FLAG_FILTERS",
    "Leaderboard", "MAX_CURVES", "MAX_PER_PAGE", "QUERY_KEYS", "ShownRow", "anonymous_key", "anonymous_row", "badges",
    "board_changed", "board_csv", "board_curves", "board_page", "headtail_metric", "path_label", "phase_views",
    "rebuild_from_scratch"
]
