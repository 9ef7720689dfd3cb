"""Rebuild a phase's board rows: everything, or only the entries of the owners whose submissions changed.

A full rebuild reads every active score's view cells (after a change of views or
settings, a moderation, a selection, an open or close). A partial one (a submission
scored or re-scored) reads only the changed submissions' owners (their team, or the
uploader; a baseline alone): their entries are rebuilt, every other entry keeps its
stored row, and each view is ranked again over the stored and rebuilt rows. Either way
only rows that differ are written; a pair of rows already adjacent keeps its p-value.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.orm import Session

from leaderboard.board.build import entry_rows, ladder_decisions, load_candidates, owners_of, selection_pool
from leaderboard.board.cells import ensure_cells
from leaderboard.board.layout import BOARDS, board_layout
from leaderboard.board.rank import previous_pairs, rank_rows
from leaderboard.board.refresh_lock import Writes
from leaderboard.models import Board, BoardRow, Phase
from leaderboard.platform import ServiceContext

ROW_FIELDS = ("position", "submission_id", "score_id", "user_id", "team_id", "display_name", "team", "method",
              "entry_metadata", "is_baseline", "builtin", "submitted_at", "submissions", "rank", "stat_rank",
              "p_vs_previous", "value", "ci_lo", "ci_hi", "ladder_step", "withheld")
KEY_FIELDS = ("phase_id", "board", "view", "entry")


@dataclass(frozen=True)
class RowPlan:
    """The rows a refresh computed, the stored rows they replace, and whether cells changed on a full rebuild."""

    existing: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    full_cells_changed: bool


def rebuild(ctx: ServiceContext, *, phase: Phase, board: Board, dirty: set[int] | None, writes: Writes) -> RowPlan:
    """Compute the phase's rows (every entry, or the owners of ``dirty`` submissions); apply_plan writes them.

    Missing cells are written through ``writes`` as they are computed; a change of views or
    settings (or no board yet) turns a partial rebuild into a full one, holding the write lock.
    """
    layout = board_layout(ctx, phase)
    existing = _existing(ctx.session, phase.id)
    if dirty is not None and (board.signature != layout.signature or not existing):
        dirty = None  # the views or settings changed, or there is no board yet: everything
        writes.hold()
    cells_changed = ensure_cells(ctx, phase=phase, layout=layout, board=board, submissions=dirty, writes=writes)
    owners = None if dirty is None else owners_of(ctx, dirty)
    candidates = load_candidates(ctx, phase=phase, layout=layout, owners=owners)
    ladder = ladder_decisions(ctx, phase=phase, layout=layout, candidates=candidates)
    pool = selection_pool(phase, candidates)
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in existing:
        grouped[(row["board"], row["view"])].append(row)
    stale = None if owners is None else owners.keys()
    rows = []
    for board_name in BOARDS:
        for index, view in enumerate(layout.views):
            old = grouped.get((board_name, index), [])
            kept = [] if stale is None else [dict(r) for r in old if _owner(r["entry"]) not in stale]
            fresh = entry_rows(phase=phase, layout=layout, board=board_name, view_index=index, candidates=candidates,
                               ladder=ladder, pool=pool)
            rows.extend(rank_rows(ctx, phase=phase, board=board_name, metric=view.metric, rows=kept + fresh,
                                  previous=previous_pairs(old)))
    return RowPlan(existing=existing, rows=rows, full_cells_changed=cells_changed and dirty is None)


def apply_plan(session: Session, plan: RowPlan) -> bool:
    """Make the phase's stored rows those of plan (only rows that differ are written); True if the board changed."""
    rows_changed = _write(session, plan.existing, plan.rows)
    return rows_changed or (plan.full_cells_changed and bool(plan.rows))


def _owner(entry: str) -> str:
    """Return the owner part of an entry key ("team:3:few-shot" -> "team:3"; "baseline:9" stays)."""
    return ":".join(entry.split(":", 2)[:2])


def _existing(session: Session, phase_id: int) -> list[dict[str, Any]]:
    """Return the phase's stored rows as dicts (with their ids)."""
    names = ("id", *KEY_FIELDS, *ROW_FIELDS)
    found = session.connection().execute(select(*(getattr(BoardRow, n) for n in names))
                                         .where(BoardRow.phase_id == phase_id))
    return [dict(zip(names, row, strict=True)) for row in found]


def _write(session: Session, existing: list[dict[str, Any]], rows: list[dict[str, Any]]) -> bool:
    """Make the phase's board_rows equal rows, touching only those that differ; return whether any did."""
    stored = {(r["board"], r["view"], r["entry"]): r for r in existing}
    inserts, updates, seen = [], [], set()
    for row in rows:
        key = (row["board"], row["view"], row["entry"])
        seen.add(key)
        old = stored.get(key)
        values = {f: row[f] for f in ROW_FIELDS}
        if old is None:
            inserts.append({**{f: row[f] for f in KEY_FIELDS}, **values})
        elif any(old[f] != values[f] for f in ROW_FIELDS):
            updates.append({"row_id": old["id"], **values})
    gone = [old["id"] for key, old in stored.items() if key not in seen]
    for start in range(0, len(gone), 500):
        session.execute(delete(BoardRow).where(BoardRow.id.in_(gone[start:start + 500])))
    if updates:
        statement = update(BoardRow).where(BoardRow.id == bindparam("row_id")).values(
            **{f: bindparam(f) for f in ROW_FIELDS})
        session.connection().execute(statement, updates)
    if inserts:
        session.execute(insert(BoardRow), inserts)
    return bool(inserts or updates or gone)
