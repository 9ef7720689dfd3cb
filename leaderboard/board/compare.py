"""Two submissions side by side (docs/RANKING.md#comparing-two-submissions): their shown figures and McNemar's test.

Who may compare what: two of the viewer's own (or their team's) scored submissions of one
phase, or, once the phase is closed, the best submissions of any two public entries of
its final ranking. Figures are the board's cells (what a participant reads on the board:
the ranked figures exact, the others coarse, docs/PROBING.md), so the page shows nothing a
board row would not. Significance comes from per-item correctness and is computed only
after close (docs/PROBING.md#comparing-two-submissions says why not before).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import select

from leaderboard.accounts import Actor, can_manage
from leaderboard.board.cells import NO_CELL, Cell, shown_split
from leaderboard.board.layout import BoardLayout, cached_layout, path_label
from leaderboard.board.ranking import BoardQuery, leaderboard
from leaderboard.board.read import cells_of, shown_cells
from leaderboard.board.stats import McNEMAR_METRICS, mcnemar_p, slice_units
from leaderboard.disclosure.ladder import ladder_applies
from leaderboard.models import Score, Submission, TeamMember, User
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import Forbidden, NotFound, ServiceContext
from scoring.correctness import unpack_bits

EXACT_BELOW = 25  # discordant items under which McNemar's p is the exact binomial one, else chi-square (corrected)
SIGNIFICANCE_BEFORE_CLOSE = False  # the attack suite's twin turns this on to show what it would leak


@dataclass(frozen=True)
class Side:
    """One of the two submissions: who, which method, when."""

    submission_id: int
    name: str
    method: str
    submitted_at: datetime


@dataclass(frozen=True)
class Line:
    """One slice: each side's figure as shown, and a − b when both are shown."""

    path: str
    label: str
    a: Cell
    b: Cell
    ranked: bool

    @property
    def difference(self) -> float | None:
        """Return a − b of the shown figures, or None when either is not shown."""
        if self.a[0] is None or self.b[0] is None:
            return None
        return round(float(self.a[0]) - float(self.b[0]), 4)


@dataclass(frozen=True)
class Significance:
    """McNemar's test on the ranked slice's items both answered: its p-value, band and which test."""

    path: str
    p_value: float
    test: str  # "exact binomial" | "chi-square with continuity correction"
    items: int  # items both answered in the slice (public structure of the two files, not labels)

    @property
    def band(self) -> str:
        """Return the p-value in words: p < 0.001, p < 0.01, p < 0.05 or not significant."""
        for cut in (0.001, 0.01, 0.05):
            if self.p_value < cut:
                return f"p < {cut:g}"
        return "not significant"


@dataclass(frozen=True)
class Comparison:
    """Two submissions of one phase, slice by slice, with the significance when it may be shown."""

    phase: Any
    board: str
    split: str
    a: Side
    b: Side
    lines: tuple[Line, ...]
    significance: Significance | None
    why_not: str  # why no significance is shown, when it is not


def mcnemar(b: int, c: int) -> tuple[float, str]:
    """Return McNemar's two-sided p-value of discordant counts b, c and its test's name.

    Exact binomial (stats.mcnemar_p) while b + c < EXACT_BELOW, else chi-square with
    continuity correction: (|b − c| − 1)² / (b + c) on one degree of freedom.
    """
    if b + c < EXACT_BELOW:
        return mcnemar_p(b, c), "exact binomial"
    statistic = (max(abs(b - c) - 1, 0) ** 2) / (b + c)
    return math.erfc(math.sqrt(statistic / 2.0)), "chi-square with continuity correction"


def compare(ctx: ServiceContext, *, a_id: int, b_id: int, viewer: Actor | None) -> Comparison:
    """Return the comparison of two submissions the viewer may compare (else NotFound or Forbidden)."""
    first, second = ctx.session.get(Submission, a_id), ctx.session.get(Submission, b_id)
    if (first is None or second is None or first.status != "scored" or second.status != "scored"
            or first.phase_id != second.phase_id):
        raise NotFound("No such pair of scored submissions of one phase.")
    subs = [first, second]
    phase = first.phase
    try:
        board = leaderboard(ctx, phase_id=phase.id, viewer=viewer, query=BoardQuery(every_row=True))
    except Forbidden as exc:
        raise NotFound("No such pair of scored submissions of one phase.") from exc
    public = {row.submission_id: row for row in board.rows if not row.withheld}
    own = all(_own(ctx, s, viewer) for s in subs)
    if not own and not (board.board == "closed" and first.id in public and second.id in public):
        raise NotFound("No such pair of scored submissions of one phase.")
    if board.board == "open" and ladder_applies(phase) and not can_manage(phase.competition, viewer):
        raise Forbidden("Under the ladder, uploads are compared only after the phase closes (docs/PROBING.md).")
    layout = cached_layout(ctx, phase)
    scores = [_score_id(ctx, s.id) for s in subs]
    paths = compared_paths(layout)
    raw = cells_of(ctx, board=board.board, rows=[ScoreRef(sid) for sid in scores], paths=paths)
    shown = [shown_cells(raw.get(sid, {}), step=None, withheld=False) for sid in scores]
    lines = tuple(Line(path=p, label=path_label(p), a=shown[0].get(p, NO_CELL), b=shown[1].get(p, NO_CELL),
                       ranked=p in layout.ranked) for p in paths)
    significance, why = _significance(ctx, phase=phase, board=board.board, metric=layout.views[0].metric,
                                      scores=scores)
    return Comparison(phase=phase, board=board.board, split=shown_split(phase, board.board),
                      a=_side(first, public), b=_side(second, public), lines=lines, significance=significance,
                      why_not=why)


def compared_paths(layout: BoardLayout) -> tuple[str, ...]:
    """Return the slices compared: each view's metric and columns, head/tail, then each breakdown value."""
    paths = [p for i, v in enumerate(layout.views) for p in (v.metric, *layout.columns(i))]
    paths += list(layout.headtail_paths())
    paths += [p for field, _ in layout.breakdowns for p in layout.breakdown_paths(field)]
    return tuple(dict.fromkeys(paths))


def _significance(ctx: ServiceContext, *, phase: Any, board: str, metric: str,
                  scores: list[int]) -> tuple[Significance | None, str]:
    """Return McNemar's test on the ranked slice after close (or before, only with the twin's switch)."""
    if board != "closed" and not SIGNIFICANCE_BEFORE_CLOSE:
        return None, ("Significance is shown once the phase closes: before, it would tell more about hidden "
                      "items than the two ranked figures do.")
    if metric.rsplit(".", 1)[-1] not in McNEMAR_METRICS or metric.endswith("group_accuracy"):
        return None, "Significance is computed for accuracy rankings only."
    bits = {sid: (correct, answered, version) for sid, correct, answered, version in ctx.session.execute(
        select(Score.id, Score.correct_bits, Score.answered_bits, Score.label_version).where(Score.id.in_(scores)))}
    labels = load_phase_labels(ctx, phase)
    units = slice_units(labels, path=metric, split=shown_split(phase, board))
    found = [bits.get(sid) for sid in scores]
    pairs = [(f[0], f[1]) for f in found if f is not None and f[0] is not None and f[1] is not None
             and f[2] == phase.label_version]
    if units is None or len(pairs) != 2:
        return None, "Significance needs both files scored on the current labels."
    mask = units[0] & unpack_bits(pairs[0][1], labels.n) & unpack_bits(pairs[1][1], labels.n)
    right = [unpack_bits(correct, labels.n)[mask] for correct, _ in pairs]
    b, c = int(np.sum(right[0] & ~right[1])), int(np.sum(~right[0] & right[1]))
    p_value, test = mcnemar(b, c)
    return Significance(path=metric, p_value=round(p_value, 4), test=test, items=int(mask.sum())), ""


@dataclass(frozen=True)
class ScoreRef:
    """What read.cells_of needs of a row: its score id."""

    score_id: int


def _score_id(ctx: ServiceContext, submission_id: int) -> int:
    """Return a submission's active score id (NotFound without one)."""
    found = ctx.session.scalar(select(Score.id).where(Score.submission_id == submission_id,
                                                      Score.retired_at.is_(None)).order_by(Score.id.desc()))
    if found is None:
        raise NotFound("No such pair of scored submissions of one phase.")
    return int(found)


def _own(ctx: ServiceContext, sub: Any, viewer: Actor | None) -> bool:
    """Return whether viewer uploaded the submission, belongs to its team, or manages its competition."""
    if can_manage(sub.phase.competition, viewer):
        return True
    if not isinstance(viewer, User) or sub.is_baseline:
        return False
    if sub.team_id is not None:
        return ctx.session.scalar(select(TeamMember.user_id).where(
            TeamMember.team_id == sub.team_id, TeamMember.user_id == viewer.id)) is not None
    return bool(sub.user_id == viewer.id)


def _side(sub: Any, public: dict[int, Any]) -> Side:
    """Return one side's header: the board's name for a ranked submission, else its uploader's and method."""
    row = public.get(sub.id)
    name = row.display_name if row is not None else (sub.team.name if sub.team is not None else
                                                     sub.user.display_name)
    return Side(submission_id=sub.id, name=name, method=sub.method or "default", submitted_at=sub.created_at)
