"""Popularity curves of a view's entries, overlaid on the ranking page (docs/LONG_TAIL.md), as anyone may see them.

The page overlays the view's five best ranked entries by default, or the entries the
visitor ticks (at most ``MAX_CURVES``). Only ranked rows of the view's board qualify
(never a baseline, a hidden or disqualified submission, or a submission that is not
its entry's row), and each curve is its result object as disclosure.visibility shows it
to participants on that board: the public split while the phase is open (curve bins
on their grid, none below ``min_slice_items`` answered items, no item counts while the
private split is hidden), the private split after it closes. An entry whose row follows
the ladder shows no curve (its slices follow the ladder's decision, which a curve would
bypass). The bins are stored when the board refreshes, as cells computed through
disclosure.visibility like every other figure of the board (board/cells.py's
curve_cells), so reading costs one small query of the chosen rows' cells: no result
object is loaded or redacted per request (docs/RANKING.md); each process keeps the
curves it drew per board version.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from leaderboard.board.cells import CURVE_PREFIX, Cell, curve_bins
from leaderboard.board.ranking import Leaderboard
from leaderboard.models import BoardRow, ScoreCell
from leaderboard.platform import ServiceContext

MAX_CURVES = 8
DEFAULT_CURVES = 5
CACHE_KEY = "board_curves"
CACHE_SIZE = 256  # curve sets a process keeps: by board version, view and the entries chosen
_lock = threading.Lock()
LADDER_NOTE = "Entries whose public scores follow the ladder show no curve until the phase closes."


@dataclass(frozen=True)
class EntryCurve:
    """One entry's popularity curve as shown: its bins as visibility shows them (each with a numeric lo and hi)."""

    submission_id: int
    name: str
    bins: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class BoardCurves:
    """The curves overlaid on a ranking page, with what the visitor may tick (plain data: web/charts.py draws it)."""

    entries: tuple[EntryCurve, ...]
    candidates: tuple[tuple[int, str, bool], ...]  # (submission id, name, shown now) of the page's ranked rows
    note: str | None


def board_curves(ctx: ServiceContext, *, board: Leaderboard,
                 submission_ids: Sequence[int] | None = None) -> BoardCurves:
    """Return the curves of the chosen ranked entries of the board's view (default: its five best)."""
    chosen = tuple(dict.fromkeys(submission_ids or board.top[:DEFAULT_CURVES]))[:MAX_CURVES]
    key = (ctx.settings.database_url, board.phase.id, board.board, board.view_index, board.version, board.readable,
           chosen)
    cache: OrderedDict[Any, tuple[tuple[EntryCurve, ...], bool]] = ctx.runtime.caches.setdefault(  # type: ignore[assignment]
        CACHE_KEY, OrderedDict())
    with _lock:
        found = cache.get(key)
    if found is None:
        found = _entries(ctx, board=board, chosen=chosen)
        with _lock:
            cache[key] = found
            while len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
    entries, laddered = found
    shown = {e.submission_id for e in entries}
    candidates = tuple((r.submission_id, entry_name(r), r.submission_id in shown)
                       for r in board.rows if r.rank is not None)
    return BoardCurves(entries=entries, candidates=candidates, note=LADDER_NOTE if laddered else None)


def _entries(ctx: ServiceContext, *, board: Leaderboard,
             chosen: tuple[int, ...]) -> tuple[tuple[EntryCurve, ...], bool]:
    """Return the curves of the chosen ranked entries from their stored cells, and whether one follows the ladder."""
    rows = _ranked_rows(ctx, board=board, submission_ids=chosen) if board.top else {}
    ladder = [i for i in chosen if i in rows and (rows[i].withheld or rows[i].ladder_step is not None)]
    stored = _curve_cells(ctx, board=board.board, score_ids=[rows[i].score_id for i in chosen
                                                             if i in rows and i not in ladder])
    entries = []
    for submission_id in chosen:
        row = rows.get(submission_id)
        if row is None or submission_id in ladder:
            continue
        bins = curve_bins(stored.get(row.score_id, {}))
        if bins:
            entries.append(EntryCurve(submission_id=submission_id, name=entry_name(row), bins=bins))
    return tuple(entries), bool(ladder)


def entry_name(row: Any) -> str:
    """Return how the overlay names an entry: its team or user, and its method unless it is the default."""
    name = row.team or row.display_name
    return name if row.method in ("", "default") else f"{name} · {row.method}"


def _ranked_rows(ctx: ServiceContext, *, board: Leaderboard, submission_ids: Iterable[int]) -> dict[int, BoardRow]:
    """Return the view's ranked rows on the board shown, by submission id, among submission_ids."""
    found = ctx.session.scalars(select(BoardRow).where(
        BoardRow.phase_id == board.phase.id, BoardRow.board == board.board, BoardRow.view == board.view_index,
        BoardRow.rank.is_not(None), BoardRow.is_baseline.is_(False),
        BoardRow.submission_id.in_(list(submission_ids))))
    return {row.submission_id: row for row in found}


def _curve_cells(ctx: ServiceContext, *, board: str, score_ids: list[int]) -> dict[int, dict[str, Cell]]:
    """Return {score id: {path: cell}} of the stored curve cells of some scores on a board (by primary key)."""
    if not score_ids:
        return {}
    found = ctx.session.execute(
        select(ScoreCell.score_id, ScoreCell.path, ScoreCell.value, ScoreCell.lo, ScoreCell.hi, ScoreCell.error)
        .where(ScoreCell.score_id.in_(sorted(set(score_ids))), ScoreCell.board == board,
               ScoreCell.path.startswith(CURVE_PREFIX, autoescape=True)))
    out: dict[int, dict[str, Cell]] = {}
    for score_id, path, value, lo, hi, error in found:
        out.setdefault(score_id, {})[path] = (value, lo, hi, error)
    return out
