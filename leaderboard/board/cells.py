"""Score cells: each active score's figures as the board shows them, one flat row per board and metric path.

A score's cells are computed once, from its result object, the first time the board
refreshes after it was recorded; the ranking then reads these few numbers and never the
result object again. What a participant may see is disclosure.visibility's rule, applied
as it stands on each board: "open" (the phase not closed: the public split while the
private one is hidden) and "closed" (after close: the private split). Cells hold the
figures before the ladder, which the ranking applies per participant (it depends on
their other submissions). When what cells depend on changes (views, probing settings,
label file: the board's signature), every cell of the phase is computed again.

A re-score computes its scores' cells ahead, in its scoring processes (``CellsView``,
handed to it through the runtime as ``CELLS_AHEAD``), and leaves them here
(``keep_ahead``, by database, submission and score) under the signature they were
computed for. The refresh that finds those scores without cells takes them (once) if
its signature is the same, and computes the rest. At most ``AHEAD_LIMIT`` scores' cells
wait in a process (the oldest go first); a refresh in another process, or after the
views changed, computes them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

from sqlalchemy import Table, delete, exists, insert, select
from sqlalchemy.orm import Session

from leaderboard.board.layout import BOARDS, BoardLayout, board_layout
from leaderboard.board.refresh_lock import Writes
from leaderboard.disclosure import visible_results
from leaderboard.models import Baseline, Board, Phase, Score, ScoreCell, Submission
from leaderboard.platform import ServiceContext

CHUNK = 200  # result objects held in memory at once while computing cells
Cell = tuple[float | None, float | None, float | None, float | None]  # value, lo, hi, error (None: exact)
NO_CELL: Cell = (None, None, None, None)
T = TypeVar("T")
CURVE_PREFIX = "curve."  # the popularity curve's cells (curve_cells), never a metric path
CellRow = tuple[str, str, Cell]  # (board, path, cell), as score_cells yields them
AHEAD_LIMIT = 2000
"""Scores whose cells, computed ahead by a re-score, may wait in one process for the refresh that takes them."""
AheadKey = tuple[str, int, int]
"""Whose cells wait: (database URL, submission id, score id); a process may serve several databases (tests)."""
_ahead: OrderedDict[AheadKey, tuple[str, list[CellRow]]] = OrderedDict()
_ahead_lock = threading.Lock()


def keep_ahead(key: AheadKey, signature: str, cells: list[CellRow]) -> None:
    """Leave a non-baseline score's cells, computed for a board signature, for the refresh that needs them."""
    with _ahead_lock:
        _ahead[key] = (signature, cells)
        while len(_ahead) > AHEAD_LIMIT:
            _ahead.popitem(last=False)


@dataclass(frozen=True)
class CellsView:
    """A phase's board as it stood when a re-score started: a detached copy of the phase and its layout."""

    phase: Phase
    layout: BoardLayout

    @property
    def signature(self) -> str:
        """Return the board signature the cells are computed for."""
        return self.layout.signature

    def cells(self, results: dict[str, Any]) -> list[CellRow]:
        """Return a participant's result's cells on both boards (a baseline's are computed by the refresh)."""
        return list(score_cells(results, phase=self.phase, layout=self.layout, builtin=False))


class CellsAhead:
    """What a re-score is handed through the runtime (``Runtime.board_cells``): board views, and where cells wait."""

    def view(self, ctx: ServiceContext, phase: Phase) -> CellsView:
        """Return the view of a phase's board as it stands (the copy travels to scoring processes; the row does not)."""
        return CellsView(as_board(phase, "open"), board_layout(ctx, phase))

    def keep(self, ctx: ServiceContext, *, submission_id: int, score_id: int, signature: str,
             cells: list[CellRow]) -> None:
        """Leave a score's cells for the refresh that needs them (``keep_ahead``)."""
        keep_ahead((ctx.settings.database_url, submission_id, score_id), signature, cells)


CELLS_AHEAD = CellsAhead()


def _take_ahead(key: AheadKey, signature: str) -> list[CellRow] | None:
    """Return (and forget) the cells kept for a score if they were computed for this signature."""
    with _ahead_lock:
        kept = _ahead.pop(key, None)
    return kept[1] if kept is not None and kept[0] == signature else None


def shown_split(phase: Phase, board: str) -> str:
    """Return the split a board ranks on: 'all' without splits, else public while open, private after close."""
    if not phase.has_private_split:
        return "all"
    return "private" if board == "closed" else "public"


def as_board(phase: Phase, board: str) -> Phase:
    """Return a detached copy of phase as it stands on a board: open, or closed (for visibility's rules)."""
    return Phase(id=phase.id, competition_id=phase.competition_id, position=phase.position, name=phase.name,
                 task_config=phase.task_config, has_private_split=phase.has_private_split, n_items=phase.n_items,
                 label_version=phase.label_version, labels_key=phase.labels_key,
                 labels_sha256=phase.labels_sha256, start_at=phase.start_at, end_at=phase.end_at,
                 state_override="closed" if board == "closed" else "open",
                 leaderboard_visibility=phase.leaderboard_visibility)


def score_cells(results: dict[str, Any], *, phase: Phase, layout: BoardLayout,
                builtin: bool) -> Iterator[tuple[str, str, Cell]]:
    """Yield (board, path, (value, lo, hi, error)) of every path of the layout as participants see it on each board.

    A view's ranking metric is exact wherever visibility shows its slice (disclosure/ranked_figures.py);
    other figures keep visibility's coarser grid, their step as the cell's error. docs/PROBING.md
    states what this costs.
    """
    for board in BOARDS:
        shown = visible_results(results, phase=as_board(phase, board))
        part = shown
        if board == "closed" and phase.has_private_split:
            part = (shown.get("splits") or {}).get(shown_split(phase, board)) or {}
        for path in layout.paths:
            yield board, path, read_path(part, path)
        if not builtin:  # a baseline is never drawn (board/curves.py)
            for path, cell in curve_cells(part):
                yield board, path, cell


def curve_cells(part: dict[str, Any]) -> Iterator[tuple[str, Cell]]:
    """Yield the popularity curve of a shown result as cells: per bin with a range, its bin, accuracy, answer rate.

    ``curve.<i>.bin`` holds (items or None, lo, hi, grid), ``curve.<i>.accuracy`` (accuracy,
    interval) and ``curve.<i>.answer_rate``; board/curves.py reads them back into the bins
    the ranking page overlays, so no read loads a result object (docs/RANKING.md).
    """
    raw = part.get("popularity_curve")
    bins = [b for b in (raw if isinstance(raw, list) else [])
            if isinstance(b, dict) and _number(b.get("lo")) is not None and _number(b.get("hi")) is not None]
    for index, part_bin in enumerate(bins):
        n = part_bin.get("n")
        count = float(n) if isinstance(n, int) and not isinstance(n, bool) else None
        yield (f"{CURVE_PREFIX}{index}.bin",
               (count, _number(part_bin["lo"]), _number(part_bin["hi"]), _number(part_bin.get("grid"))))
        bounds = (part_bin.get("ci") or {}).get("accuracy")
        pair = (_number(bounds[0]), _number(bounds[1])) if isinstance(bounds, (list, tuple)) and len(bounds) == 2 \
            else (None, None)
        if None in pair:
            pair = (None, None)
        accuracy = _number(part_bin.get("accuracy"))
        if accuracy is not None or pair[0] is not None:
            yield f"{CURVE_PREFIX}{index}.accuracy", (accuracy, pair[0], pair[1], None)
        rate = _number(part_bin.get("answer_rate"))
        if rate is not None:
            yield f"{CURVE_PREFIX}{index}.answer_rate", (rate, None, None, None)


def curve_bins(cells: dict[str, Cell]) -> tuple[dict[str, Any], ...]:
    """Return the curve bins stored by curve_cells ({path: cell} of one score on one board), in bin order."""
    count = sum(1 for path in cells if path.startswith(CURVE_PREFIX) and path.endswith(".bin"))
    out = []
    for index in range(count):
        n, lo, hi, grid = cells.get(f"{CURVE_PREFIX}{index}.bin", NO_CELL)
        if lo is None or hi is None:
            continue
        accuracy, ci_lo, ci_hi, _ = cells.get(f"{CURVE_PREFIX}{index}.accuracy", NO_CELL)
        part: dict[str, Any] = {"lo": lo, "hi": hi, "n": None if n is None else int(n), "accuracy": accuracy,
                                "answer_rate": cells.get(f"{CURVE_PREFIX}{index}.answer_rate", NO_CELL)[0],
                                "grid": grid}
        if ci_lo is not None and ci_hi is not None:
            part["ci"] = {"accuracy": [ci_lo, ci_hi]}
        out.append(part)
    return tuple(out)


def read_path(result: dict[str, Any], path: str) -> Cell:
    """Return (value, lo, hi, error) of a metric path in a (shown) result object; None where it is absent.

    ``error`` is how far the shown value can be from the exact one (a coarse figure's step), None when exact.
    """
    parts = path.split(".")
    if len(parts) == 1:
        return _slice_cell(result.get("overall"), parts[0])
    if parts[0] == "pairs":
        pairs = result.get("pairs") or {}
        return _number(pairs.get(parts[1])), None, None, _error(pairs, parts[1])
    if parts[0] == "popularity":
        popularity = result.get("popularity") or {}
        if parts[1] in ("gap", "relative_drop"):
            error = ((popularity.get("error") or {}).get(parts[1]) or {}).get(parts[2])
            return _number((popularity.get(parts[1]) or {}).get(parts[2])), None, None, _number(error)
        return _slice_cell(popularity.get(parts[1]), parts[2])
    table = (result.get("breakdowns") or {}).get(parts[1]) or {}
    return _slice_cell(table.get(".".join(parts[2:-1])), parts[-1])


def _slice_cell(part: Any, metric: str) -> Cell:
    """Return one metric of a slice object with its interval and its error."""
    if not isinstance(part, dict):
        return NO_CELL
    value = _number(part.get(metric))
    error = _error(part, metric)
    interval = (part.get("ci") or {}).get(metric) if isinstance(part.get("ci"), dict) else None
    if value is None or not isinstance(interval, list) or len(interval) != 2:
        return value, None, None, error
    return value, _number(interval[0]), _number(interval[1]), error


def _error(part: dict[str, Any], key: str) -> float | None:
    """Return the step of a coarse figure of a slice (its grid), None when the figure is exact or absent."""
    if part.get(key) is None or key in (part.get("exact") or ()) or key in ("n", "n_pairs", "incomplete_pairs"):
        return None
    return _number(part.get("grid"))


def _number(value: Any) -> float | None:
    """Return value as a float when it is a number (not a bool), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def ensure_cells(ctx: ServiceContext, *, phase: Phase, layout: BoardLayout, board: Board,
                 submissions: set[int] | None = None, writes: Writes | None = None) -> bool:
    """Compute the cells of active scores that have none (of the phase, or of some submissions); return if any.

    A new signature (views, settings, labels changed) recomputes every cell of the phase;
    cells of retired scores are dropped. Writes go through ``writes`` (board/refresh_lock.py:
    short transactions of their own on SQLite), by default in the caller's transaction.
    """
    write = writes.write if writes is not None else _at_once
    session = ctx.session
    changed = board.signature != layout.signature
    if changed:
        session.execute(delete(ScoreCell).where(ScoreCell.phase_id == phase.id))
        board.signature = layout.signature
        submissions = None
    scope = [Submission.phase_id == phase.id]
    if submissions is not None:
        scope.append(Submission.id.in_(sorted(submissions)))
    retired = list(session.scalars(
        select(Score.id).join(Submission, Submission.id == Score.submission_id)
        .where(*scope, Score.retired_at.is_not(None), exists().where(ScoreCell.score_id == Score.id))))
    for start in range(0, len(retired), CHUNK):
        write(partial(_drop_cells, session, retired[start:start + CHUNK]))
    missing = list(session.execute(
        select(Score.id, (Baseline.kind == "builtin").label("builtin"), Submission.id)
        .join(Submission, Submission.id == Score.submission_id)
        .outerjoin(Baseline, Baseline.submission_id == Submission.id)
        .where(*scope, Submission.status == "scored", Score.retired_at.is_(None),
               ~exists().where(ScoreCell.score_id == Score.id))
        .order_by(Score.id)
    ).all())
    for start in range(0, len(missing), CHUNK):
        rows = _cell_rows(ctx, phase=phase, layout=layout, missing=missing[start:start + CHUNK])
        if rows:
            write(partial(_insert_cells, session, rows))
    return changed or bool(missing)


def _cell_rows(ctx: ServiceContext, *, phase: Phase, layout: BoardLayout,
               missing: list[Any]) -> list[dict[str, Any]]:
    """Return the cell rows of scores without cells ((score, builtin, submission) rows): kept ahead, else computed."""
    builtin = {row[0]: bool(row[1]) for row in missing}
    ahead = {score_id: cells for score_id, is_builtin, submission_id in missing if not is_builtin and (
        cells := _take_ahead((ctx.settings.database_url, submission_id, score_id), layout.signature)) is not None}
    left = [score_id for score_id in builtin if score_id not in ahead]
    results = ctx.session.execute(select(Score.id, Score.results).where(Score.id.in_(left))).all() if left else []
    computed = {score_id: score_cells(result, phase=phase, layout=layout, builtin=builtin[score_id])
                for score_id, result in results}
    return [{"score_id": score_id, "phase_id": phase.id, "board": board_name, "path": path,
             "value": cell[0], "lo": cell[1], "hi": cell[2], "error": cell[3]}
            for score_id, cells in [*ahead.items(), *computed.items()] for board_name, path, cell in cells]


def _drop_cells(session: Session, score_ids: list[int]) -> None:
    """Delete the cells of these scores."""
    session.execute(delete(ScoreCell).where(ScoreCell.score_id.in_(score_ids)))


CELL_COLUMNS = ("score_id", "phase_id", "board", "path", "value", "lo", "hi", "error")


def _insert_cells(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert computed cells: PostgreSQL's COPY, else one executemany of the table's INSERT.

    Not the ORM's bulk insert: it leaves out a row's None values, so every pattern of
    missing intervals became a statement of its own (10,424 statements for 14,000 cells).
    On PostgreSQL even one executemany sends a statement a row, a loop in the process
    that holds its other threads (requests) meanwhile: COPY took 50 ms for 14,000 cells
    where the executemany took 264 ms.
    """
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        session.execute(insert(cast(Table, ScoreCell.__table__)), rows)
        return
    driver = connection.connection.driver_connection  # psycopg's, in the session's transaction
    assert driver is not None
    statement = f"COPY {ScoreCell.__tablename__} ({', '.join(CELL_COLUMNS)}) FROM STDIN"
    with driver.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row([row[column] for column in CELL_COLUMNS])


def _at_once(action: Callable[[], T]) -> T:
    """Run a write in the caller's transaction."""
    return action()
