"""A board as CSV (docs/RANKING.md, docs/ENTRIES.md): every row of a view, one column per metric path and metadata key.

No cell reads as a formula in a spreadsheet: a text cell starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is prefixed with ``'``. Numbers are written as
shown on the page (rounded; under the ladder, at the ladder's step); a coarse column
(docs/PROBING.md) is followed, after all columns, by ``<path>.error``: how far its shown
value can be from the exact one.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from leaderboard.board.cells import NO_CELL
from leaderboard.board.ranking import Leaderboard
from leaderboard.board.read import ShownRow
from leaderboard.entries import METADATA_KEYS
from leaderboard.platform.db import as_aware_utc

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def board_csv(board: Leaderboard) -> str:
    """Return every row of the board's view as CSV: rank, statistics, entry, value, interval, columns, metadata."""
    metric = board.view.metric
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    coarse = tuple(p for p in board.columns if any(row.columns.get(p, NO_CELL)[3] is not None for row in board.rows))
    writer.writerow(["rank", "stat_rank", "p_vs_previous", "name", "team", "method", "is_baseline", "submission_id",
                     "submitted_at", metric, f"{metric}.ci_lo", f"{metric}.ci_hi", *board.columns,
                     *(f"{path}.error" for path in coarse), *METADATA_KEYS])
    for row in board.rows:
        writer.writerow([_cell(value) for value in _values(row, board.columns, coarse)])
    return out.getvalue()


def _values(row: ShownRow, columns: tuple[str, ...], coarse: tuple[str, ...]) -> list[Any]:
    """Return a row's CSV values in the header's order (a coarse column's error after the columns)."""
    lo, hi = row.ci if row.ci is not None else (None, None)
    submitted = as_aware_utc(row.submitted_at).isoformat(timespec="seconds").replace("+00:00", "Z")
    return [row.rank, row.stat_rank, row.p_vs_previous, row.display_name, row.team, row.method, row.is_baseline,
            row.submission_id, submitted, row.value, lo, hi,
            *(row.columns.get(path, (None,))[0] for path in columns),
            *(row.columns.get(path, NO_CELL)[3] for path in coarse),
            *(row.metadata.get(key) for key in METADATA_KEYS)]


def _cell(value: Any) -> str:
    """Return one CSV cell: empty for None, true/false, numbers as they are, text made formula-safe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
