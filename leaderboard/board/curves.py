"""Popularity curves of a view's entries, overlaid on the ranking page (docs/LONG_TAIL.md), as anyone may see them.

The page overlays the view's five best ranked entries by default, or the entries the
visitor ticks (at most ``MAX_CURVES``). Only ranked rows of the view's board qualify
(never a baseline, a hidden or disqualified submission, or a submission that is not
its entry's row), and each curve is its result object as disclosure.visibility shows it
to participants on that board: the public split while the phase is open (curve bins
on their grid, none below ``min_slice_items`` answered items, no item counts while the
private split is hidden), the private split after it closes. An entry whose row follows
the ladder shows no curve (its slices follow the ladder's decision, which a curve would
bypass). Reading costs the chosen rows' result objects, nothing per submission.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from leaderboard.board.cells import as_board
from leaderboard.board.ranking import Leaderboard
from leaderboard.disclosure import visible_results
from leaderboard.models import BoardRow, Score
from leaderboard.platform import ServiceContext

MAX_CURVES = 8
DEFAULT_CURVES = 5
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
    chosen = list(dict.fromkeys(submission_ids or board.top[:DEFAULT_CURVES]))[:MAX_CURVES]
    rows = _ranked_rows(ctx, board=board, submission_ids=chosen) if board.top else {}
    ladder = [i for i in chosen if i in rows and (rows[i].withheld or rows[i].ladder_step is not None)]
    scores = _results(ctx, [rows[i].score_id for i in chosen if i in rows and i not in ladder])
    phase = as_board(board.phase, board.board)
    entries = []
    for submission_id in chosen:
        row = rows.get(submission_id)
        results = None if row is None else scores.get(row.score_id)
        if row is None or results is None:
            continue
        bins = _with_range(_shown_split(visible_results(results, phase=phase), board).get("popularity_curve"))
        if bins:
            entries.append(EntryCurve(submission_id=submission_id, name=entry_name(row), bins=tuple(bins)))
    shown = {e.submission_id for e in entries}
    candidates = tuple((r.submission_id, entry_name(r), r.submission_id in shown)
                       for r in board.rows if r.rank is not None)
    return BoardCurves(entries=tuple(entries), candidates=candidates, note=LADDER_NOTE if ladder else None)


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


def _results(ctx: ServiceContext, score_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Return the result objects of active scores by score id."""
    if not score_ids:
        return {}
    found = ctx.session.execute(select(Score.id, Score.results).where(
        Score.id.in_(score_ids), Score.retired_at.is_(None)))
    return {score_id: results for score_id, results in found}


def _shown_split(shown: dict[str, Any], board: Leaderboard) -> dict[str, Any]:
    """Return the part of a visible result the board ranks on: the private split after close, else the top level."""
    if board.board == "closed" and board.phase.has_private_split:
        part: dict[str, Any] = (shown.get("splits") or {}).get("private") or {}
        return part
    return shown


def _with_range(raw: Any) -> tuple[dict[str, Any], ...]:
    """Return the popularity-curve bins of a visible result that have a value range (a numeric lo and hi)."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return tuple(part for part in (raw if isinstance(raw, list) else [])
                 if isinstance(part, dict) and number(part.get("lo")) and number(part.get("hi")))
