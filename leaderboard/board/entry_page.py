"""An entry's page (docs/RANKING.md#entry-pages): method, metadata, the history of its bests, charts after close.

An entry is a team, or a participant without a team, with one method (or a baseline alone);
its key is the board's (``team:3:default``, ``user:5:zero-shot``, ``baseline:12``). The page
shows what the entry's board row shows and nothing more: the ranked figure of each
submission that improved the entry's best as the board shows that figure (exact where
the board ranks by it, never under the ladder, where only the row's released value is
shown), and the charts of the best submission only once the phase is closed, as
disclosure.visibility shows them to anyone. A moderated entry has no board row, so no page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from leaderboard.board.cells import NO_CELL, Cell, shown_split
from leaderboard.board.compare import ScoreRef
from leaderboard.board.layout import path_label
from leaderboard.board.ranking import BoardQuery, Leaderboard, leaderboard
from leaderboard.board.read import ShownRow, cells_of, shown_cells
from leaderboard.disclosure import visible_results
from leaderboard.entries import METADATA_KEYS
from leaderboard.models import BoardRow, Score, Submission
from leaderboard.platform import Forbidden, NotFound, ServiceContext
from scoring import higher_is_better


@dataclass(frozen=True)
class Best:
    """One submission that improved the entry's best, with its ranked figure as the board shows it."""

    submission_id: int
    submitted_at: datetime
    cell: Cell


@dataclass(frozen=True)
class EntryPage:
    """What an entry's page shows."""

    board: Leaderboard
    entry: str
    row: ShownRow
    metric: str
    metric_label: str
    metadata: tuple[tuple[str, Any], ...]  # (key, value) in METADATA_KEYS order
    history: tuple[Best, ...]  # oldest first
    charts: dict[str, Any] | None  # the best submission's result as anyone may see it, after close only
    neighbour: ShownRow | None  # after close: the ranked entry just above (below, for the first), to compare with

    @property
    def value(self) -> Cell:
        """Return the row's ranked figure as a cell (value, interval), as the ranking shows it."""
        lo, hi = self.row.ci or (None, None)
        return self.row.value, lo, hi, None

    @property
    def phase(self) -> Any:
        """Return the entry's phase."""
        return self.board.phase


def entry_page(ctx: ServiceContext, *, phase_id: int, entry: str, viewer: Any) -> EntryPage:
    """Return an entry's page as the viewer may see it; NotFound when the board or the entry is not shown."""
    try:
        board = leaderboard(ctx, phase_id=phase_id, viewer=viewer, query=BoardQuery(every_row=True))
    except Forbidden as exc:
        raise NotFound(f"No entry {entry!r} on this ranking.") from exc
    found = ctx.session.scalar(select(BoardRow.submission_id).where(
        BoardRow.phase_id == phase_id, BoardRow.board == board.board, BoardRow.view == 0, BoardRow.entry == entry))
    row = next((r for r in board.rows if r.submission_id == found), None) if found is not None else None
    if row is None:
        raise NotFound(f"No entry {entry!r} on this ranking.")
    metric = board.layout.views[0].metric
    metadata = tuple((k, row.metadata[k]) for k in METADATA_KEYS if row.metadata.get(k) not in (None, ""))
    return EntryPage(board=board, entry=entry, row=row, metric=metric, metric_label=path_label(metric),
                     metadata=metadata, history=_history(ctx, board, entry, row, metric),
                     charts=_charts(ctx, board, row), neighbour=_neighbour(board, row))


def public_submission(ctx: ServiceContext, *, submission_id: int) -> tuple[Submission, EntryPage] | None:
    """Return a submission and its entry's page when it is the ranked one of an entry anyone sees after close."""
    found = ctx.session.execute(select(BoardRow.phase_id, BoardRow.entry).where(
        BoardRow.submission_id == submission_id, BoardRow.board == "closed", BoardRow.view == 0)).first()
    if found is None:
        return None
    try:
        page = entry_page(ctx, phase_id=found.phase_id, entry=found.entry, viewer=None)
    except NotFound:
        return None
    if page.board.board != "closed" or page.row.submission_id != submission_id or page.row.withheld:
        return None
    submission = ctx.session.get(Submission, submission_id)
    if submission is None or submission.moderation is not None or submission.status != "scored":
        return None
    return submission, page


def entry_submissions(ctx: ServiceContext, *, phase_id: int, entry: str) -> list[tuple[int, datetime, int]]:
    """Return (submission id, time, active score id) of an entry's scored, unmoderated submissions, oldest first."""
    kind, _, rest = entry.partition(":")
    query = select(Submission.id, Submission.created_at, Score.id).join(Score, Score.submission_id == Submission.id)
    query = query.where(Submission.phase_id == phase_id, Submission.status == "scored",
                        Submission.moderation.is_(None), Score.retired_at.is_(None))
    if kind == "baseline" and rest.isdigit():
        query = query.where(Submission.id == int(rest))
    else:
        owner, _, method = rest.partition(":")
        if not owner.isdigit() or kind not in ("team", "user"):
            return []
        owner_filter = (Submission.team_id == int(owner) if kind == "team" else
                        (Submission.team_id.is_(None)) & (Submission.user_id == int(owner)))
        query = query.where(owner_filter, Submission.is_baseline.is_(False),
                            Submission.method == method)
    return [(sid, at, score) for sid, at, score in ctx.session.execute(query.order_by(Submission.created_at,
                                                                                      Submission.id))]


def _history(ctx: ServiceContext, board: Leaderboard, entry: str, row: ShownRow, metric: str) -> tuple[Best, ...]:
    """Return each submission that improved the entry's shown best (the row alone under the ladder or selection)."""
    current = Best(submission_id=row.submission_id, submitted_at=row.submitted_at,
                   cell=(row.value, *(row.ci or (None, None)), None))
    selecting = board.board == "closed" and isinstance((board.phase.task_config or {}).get("final_selections"), int)
    if row.ladder_step is not None or row.withheld or selecting:
        return (current,)
    found = entry_submissions(ctx, phase_id=board.phase.id, entry=entry)
    raw = cells_of(ctx, board=board.board, rows=[ScoreRef(score) for _, _, score in found], paths=[metric])
    higher, best, out = higher_is_better(metric), None, []
    for sid, at, score in found:
        cell = shown_cells(raw.get(score, {}), step=None, withheld=False).get(metric, NO_CELL)
        value = cell[0]
        if value is None:
            continue
        if best is None or (value > best if higher else value < best):
            best = value
            out.append(Best(submission_id=sid, submitted_at=at, cell=cell))
    return tuple(out) or (current,)


def _charts(ctx: ServiceContext, board: Leaderboard, row: ShownRow) -> dict[str, Any] | None:
    """Return the best submission's result as anyone may see it on the closed board's split, else None."""
    if board.board != "closed" or row.withheld:
        return None
    results = ctx.session.scalar(select(Score.results).where(Score.id == row.score_id))
    if not results:
        return None
    shown = visible_results(results, phase=board.phase)
    if board.phase.has_private_split:
        return (shown.get("splits") or {}).get(shown_split(board.phase, "closed")) or None
    return shown


def entry_key(row: ShownRow) -> str:
    """Return a board row's entry key (build.Candidate.entry): its baseline, else its team or user and method."""
    if row.is_baseline:
        return f"baseline:{row.submission_id}"
    if row.team_id is not None:
        return f"team:{row.team_id}:{row.method}"
    return f"user:{row.user_id}:{row.method}"


def _neighbour(board: Leaderboard, row: ShownRow) -> ShownRow | None:
    """Return, after close, the shown entry ranked just above the row (or below, for the first), else None."""
    if board.board != "closed":
        return None
    ranked = [r for r in board.rows if r.rank is not None and not r.withheld]
    index = next((i for i, r in enumerate(ranked) if r.submission_id == row.submission_id), None)
    if index is None or len(ranked) < 2:
        return None
    return ranked[index - 1] if index > 0 else ranked[1]
