"""Read a materialized board: one view's rows with their column cells, cached per process by the board's version.

A view's rows change only when the board's ``version`` does, so each process keeps the
last views it loaded keyed by (phase, board, view, version) and a read of an unchanged
board touches the database once (the version). Loading a view reads its board_rows
and, for each, the cells of the view's columns: flat values, never a result object.
Cells of the other sections of the page (head/tail, breakdowns, pairs) are read for the
rows of one page only (``page_cells``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select

from leaderboard.board.cells import NO_CELL, Cell
from leaderboard.disclosure import round_floats, rounded_to_step
from leaderboard.disclosure.ladder import NOT_SCORES
from leaderboard.models import Board, BoardRow, ScoreCell
from leaderboard.platform import ServiceContext

CACHE_KEY = "board_views"
CACHE_SIZE = 64
SECTION_KEY = "board_section_cells"
SECTION_VERSIONS = 16  # board versions whose page-section cells a process keeps
COUNT_LEAVES = frozenset({"answered", "correct", "n"})
WHOLE_LEAVES = frozenset({"n_pairs", "n"})
_lock = threading.Lock()
_loading: dict[Any, threading.Lock] = {}  # a lock per view being loaded now


@dataclass(frozen=True)
class ShownRow:
    """One row of a view as everyone sees it (figures rounded, laddered where the ladder applies)."""

    position: int
    rank: int | None
    stat_rank: int | None
    p_vs_previous: float | None
    display_name: str
    team: str | None
    method: str
    metadata: dict[str, Any]
    is_baseline: bool
    builtin: bool
    submission_id: int
    score_id: int
    submitted_at: datetime
    submissions: int
    value: float | None
    ci: tuple[float, float] | None
    columns: dict[str, Cell]
    user_id: int | None
    team_id: int | None
    ladder_step: float | None
    withheld: bool
    mine: bool = False


@dataclass(frozen=True)
class LoadedView:
    """Every row of one view on one board, in the view's order, at one board version."""

    version: int
    rows: tuple[ShownRow, ...]
    columns: tuple[str, ...]
    present: tuple[str, ...] = ()  # the columns with a value in some row
    top: tuple[int, ...] = ()  # submission ids of the five best ranked entries
    search: tuple[str, ...] = ()  # per row: its name, team and method casefolded, joined by NUL, for ?q= (ranking.py)
    signature: str | None = None  # the board signature the rows' cells were read under (None: no row)
    with_cells: frozenset[int] = frozenset()  # the scores whose cells were there (a score has all its cells or none)
    orders: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)
    """Row indices per (sort, order) asked so far (ranking.py); a view has a dozen orders at most."""
    printed: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    """Rows printed so far for pages, by row and section (web/board_cache/rows.py): a few texts per row at most."""


def kept(store: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """Return what a loaded view's store (``LoadedView.printed``) keeps for key, made and kept on first use."""
    found = store.get(key)
    if found is None:
        found = store[key] = make()
    return found


def load_view(ctx: ServiceContext, *, phase_id: int, board: str, view: int, version: int,
              columns: Sequence[str], may_lag: bool = False) -> LoadedView:
    """Return a view's rows with their column cells, from the process cache when the version matches.

    One thread loads a missing view; the others asking for it meanwhile wait and take the
    loaded one, or, when they ``may_lag`` (anonymous readers that changed nothing:
    ranking.py), are shown the view's version before it if this process keeps one (a
    moment older: the version they read a few milliseconds earlier). After a restart or a
    new version, sixteen threads of a worker would otherwise each read the same thousands
    of rows at once, or all queue behind the one that does. A writer, an organizer or a
    participant always gets the version it asked for. ``LoadedView.version`` says which
    version an answer shows; caches keyed by the database's version check it
    (web/board_cache/middleware.py).
    """
    key = (ctx.settings.database_url, phase_id, board, view, version, tuple(columns))
    cache: OrderedDict[Any, LoadedView] = ctx.runtime.caches.setdefault(CACHE_KEY, OrderedDict())  # type: ignore[assignment]
    found = _cached(cache, key)
    if found is not None:
        return found
    with _lock:
        flight = _loading.setdefault(key, threading.Lock())
    if not flight.acquire(blocking=False):
        shown = _earlier(cache, key) if may_lag else None
        if shown is not None:
            return shown  # another thread loads this version: the one before meanwhile, not a wait in line
        flight.acquire()
    try:
        found = _cached(cache, key)
        if found is not None:
            return found
        loaded = _load(ctx, phase_id=phase_id, board=board, view=view, version=version, columns=columns,
                       earlier=_earlier(cache, key))
        with _lock:
            cache[key] = loaded
            while len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
            _loading.pop(key, None)
    finally:
        flight.release()
    return loaded


def _cached(cache: OrderedDict[Any, LoadedView], key: tuple[Any, ...]) -> LoadedView | None:
    """Return the cached view for key (marking it recently used), or None."""
    with _lock:
        found = cache.get(key)
        if found is not None:
            cache.move_to_end(key)
        return found


def _earlier(cache: OrderedDict[Any, LoadedView], key: tuple[Any, ...]) -> LoadedView | None:
    """Return the last used kept version of key's view (same database, phase, board, view and columns), or None.

    Versions are random numbers (board/versions.py), so the cache's order tells which came last.
    """
    with _lock:
        return next((loaded for k, loaded in reversed(cache.items()) if k[:4] == key[:4] and k[5] == key[5]), None)


ROW_COLUMNS = (BoardRow.position, BoardRow.rank, BoardRow.stat_rank, BoardRow.p_vs_previous, BoardRow.display_name,
               BoardRow.team, BoardRow.method, BoardRow.entry_metadata, BoardRow.is_baseline, BoardRow.builtin,
               BoardRow.submission_id, BoardRow.score_id, BoardRow.submitted_at, BoardRow.submissions,
               BoardRow.value, BoardRow.ci_lo, BoardRow.ci_hi, BoardRow.user_id, BoardRow.team_id,
               BoardRow.ladder_step, BoardRow.withheld)


def _load(ctx: ServiceContext, *, phase_id: int, board: str, view: int, version: int,
          columns: Sequence[str], earlier: LoadedView | None = None) -> LoadedView:
    """Read a view's rows and column cells from the database, the cells an earlier version already shows excepted.

    A score's cells never change under one signature (board/cells.py writes all of a
    score's cells at once, and a new signature writes them all anew), so the shown cells of
    a row whose score, ladder step and withholding an earlier load of the view under the
    same signature showed, with its cells there, are taken from it: a refresh that moved a
    few entries reads a few rows' cells. The signature comes in the rows' own statement,
    so rows and signature are one snapshot.
    """
    rows = ctx.session.execute(select(*ROW_COLUMNS, Board.signature).join(Board, Board.phase_id == BoardRow.phase_id)
                               .where(BoardRow.phase_id == phase_id, BoardRow.board == board, BoardRow.view == view)
                               .order_by(BoardRow.position)).all()
    signature = rows[0].signature if rows else None
    known: dict[tuple[int, float | None, bool], dict[str, Cell]] = {}
    if earlier is not None and earlier.signature is not None and earlier.signature == signature:
        known = {_shown_as(r): r.columns for r in earlier.rows if r.score_id in earlier.with_cells}
    reused = [known.get(_shown_as(row)) for row in rows]
    cells = cells_of(ctx, board=board, rows=[r for r, same in zip(rows, reused, strict=True) if same is None],
                     paths=columns)
    with_cells = frozenset(cells).union(r.score_id for r, same in zip(rows, reused, strict=True) if same is not None)
    shown = tuple(_shown(row, same, cells.get(row.score_id, {}), columns)
                  for row, same in zip(rows, reused, strict=True))
    present = tuple(c for c in columns if any(r.columns.get(c, (None,))[0] is not None for r in shown))
    top = tuple(r.submission_id for r in shown if r.rank is not None)[:5]
    search = tuple("\0".join((text or "").casefold() for text in (r.display_name, r.team, r.method)) for r in shown)
    return LoadedView(version=version, rows=shown, columns=tuple(columns), present=present, top=top, search=search,
                      signature=signature, with_cells=with_cells)


def _shown_as(row: Any) -> tuple[int, float | None, bool]:
    """Return what a row's shown cells depend on besides the signature: its score, ladder step and withholding."""
    return row.score_id, row.ladder_step, row.withheld


def cells_of(ctx: ServiceContext, *, board: str, rows: Iterable[Any],
             paths: Sequence[str]) -> dict[int, dict[str, Cell]]:
    """Return {score id: {path: cell}} of the given rows' scores on a board, for the given paths.

    By primary key (score, board, path) only: with a phase condition added, SQLite chose the
    (phase, board, path) index and read every score of the phase (190 ms instead of 13 ms
    for 500 rows of a 10,000-submission phase, measured).
    """
    ids = sorted({row.score_id for row in rows})
    out: dict[int, dict[str, Cell]] = {}
    if not ids or not paths:
        return out
    for start in range(0, len(ids), 500):
        found = ctx.session.execute(
            select(ScoreCell.score_id, ScoreCell.path, ScoreCell.value, ScoreCell.lo, ScoreCell.hi, ScoreCell.error)
            .where(ScoreCell.board == board, ScoreCell.score_id.in_(ids[start:start + 500]),
                   ScoreCell.path.in_(list(paths))))
        for score_id, path, value, lo, hi, error in found:
            out.setdefault(score_id, {})[path] = (value, lo, hi, error)
    return out


def section_cells(ctx: ServiceContext, *, phase_id: int, board: str, version: int, rows: Sequence[ShownRow],
                  paths: Sequence[str]) -> dict[int, dict[str, Cell]]:
    """Return {score id: cells as shown} of some rows for the page's sections, kept per board version.

    The sections under the ranking (head/tail, breakdowns, pairs) show the page's rows
    only; a row's shown cells change only with the board's version, so each process keeps
    them per version (the last ``SECTION_VERSIONS``) and reads only the rows it has not yet.
    """
    key = (ctx.settings.database_url, phase_id, board, version, tuple(paths))
    cache: OrderedDict[Any, dict[Any, dict[str, Cell]]] = ctx.runtime.caches.setdefault(  # type: ignore[assignment]
        SECTION_KEY, OrderedDict())
    with _lock:
        store = cache.get(key)
        if store is None:
            store = cache[key] = {}
            while len(cache) > SECTION_VERSIONS:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
    missing = [r for r in rows if (r.score_id, r.ladder_step, r.withheld) not in store]
    if missing:
        raw = cells_of(ctx, board=board, rows=missing, paths=paths)
        for r in missing:
            store[(r.score_id, r.ladder_step, r.withheld)] = shown_cells(raw.get(r.score_id, {}), step=r.ladder_step,
                                                                         withheld=r.withheld)
    return {r.score_id: store[(r.score_id, r.ladder_step, r.withheld)] for r in rows}


def shown_cells(cells: dict[str, Cell], *, step: float | None, withheld: bool) -> dict[str, Cell]:
    """Return cells as a row shows them: nothing when withheld, rounded to the ladder step, else to 4 decimals."""
    if withheld:
        return {}
    out: dict[str, Cell] = {}
    for path, cell in cells.items():
        leaf = path.rsplit(".", 1)[-1]
        if step is not None and leaf in COUNT_LEAVES:
            continue
        if step is not None and leaf not in NOT_SCORES:
            value, lo, hi = (None if x is None else rounded_to_step(x, step) for x in cell[:3])
            cell = (value, lo, hi, cell[3])
        if leaf in WHOLE_LEAVES and isinstance(cell[0], float) and cell[0].is_integer():
            cell = (int(cell[0]), None, None, None)
        out[path] = tuple(round_floats(list(cell)))  # type: ignore[assignment]
    return out


def _shown(row: Any, known: dict[str, Cell] | None, cells: dict[str, Cell], columns: Sequence[str]) -> ShownRow:
    """Return a stored row (ROW_COLUMNS) as shown: its column cells as known already, else shown from cells."""
    ci = (row.ci_lo, row.ci_hi) if row.ci_lo is not None and row.ci_hi is not None else None
    return ShownRow(
        position=row.position, rank=row.rank, stat_rank=row.stat_rank,
        p_vs_previous=None if row.p_vs_previous is None else round(row.p_vs_previous, 4),
        display_name=row.display_name, team=row.team, method=row.method, metadata=dict(row.entry_metadata or {}),
        is_baseline=row.is_baseline, builtin=row.builtin, submission_id=row.submission_id, score_id=row.score_id,
        submitted_at=row.submitted_at, submissions=row.submissions, value=round_floats(row.value),
        ci=None if ci is None else (round(ci[0], 4), round(ci[1], 4)),
        columns=known if known is not None else shown_cells({p: cells.get(p, NO_CELL) for p in columns},
                                                            step=row.ladder_step, withheld=row.withheld),
        user_id=row.user_id, team_id=row.team_id, ladder_step=row.ladder_step, withheld=row.withheld)


def marked(rows: Sequence[ShownRow], *, user_id: int | None, team_ids: frozenset[int]) -> list[ShownRow]:
    """Return rows with the viewer's own entries marked (their user row or a team they belong to)."""
    if user_id is None:
        return list(rows)
    return [replace(r, mine=True) if (r.user_id == user_id or (r.team_id is not None and r.team_id in team_ids))
            and not r.is_baseline else r for r in rows]
