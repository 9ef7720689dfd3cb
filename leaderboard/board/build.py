"""Build a phase's ranked rows from score cells: entries, the ladder, final selection, ranks, stat ranks, p-values.

The ranking rule (stated on the page): an entry is (team, or user without a team;
method), and a baseline is an entry of its own. Each entry's best submission on the
view's metric, on the board's split, as participants see it, is its row; rows are
ordered by that value (direction from scoring's registry; a missing value last), ties
to the earlier submission, then to the lower submission id. Baselines take a place in
that order but no rank. Hidden or disqualified submissions are never candidates.

On the open board under ``public_feedback: ladder``, each owner (team, or user without
one) climbs one ladder over its submissions in the order they were first scored; only
released submissions are candidates, at their released (step-rounded) figures. On the
closed board with ``final_selections`` K, an owner's candidates are the submissions it
selected, or with none selected its K best by public value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select

from leaderboard.board.cells import NO_CELL, Cell
from leaderboard.board.layout import BoardLayout
from leaderboard.disclosure import LadderDecision, ladder_walk, probing_settings, rounded_to_step
from leaderboard.models import Baseline, Phase, Score, ScoreCell, Submission, Team, User
from leaderboard.platform import ServiceContext
from scoring import higher_is_better

CHUNK = 500  # ids per IN list



@dataclass
class Candidate:
    """A scored, unmoderated-or-not submission of the phase with the cells the ranking reads."""

    submission_id: int
    score_id: int
    user_id: int
    team_id: int | None
    method: str
    metadata: dict[str, Any] | None
    is_baseline: bool
    builtin: bool
    selected: bool
    moderated: bool
    created_at: datetime
    public_primary: float | None
    label_version: int
    display_name: str
    team: str | None
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        """Return who the submission counts for: a team, a user without a team, or the baseline itself."""
        if self.is_baseline:
            return f"baseline:{self.submission_id}"
        return f"team:{self.team_id}" if self.team_id is not None else f"user:{self.user_id}"

    @property
    def entry(self) -> str:
        """Return the entry key: the owner and the method (a baseline alone)."""
        return self.owner if self.is_baseline else f"{self.owner}:{self.method}"


@dataclass(frozen=True)
class Owners:
    """Who a partial refresh rebuilds: teams, users without a team, baselines (by submission id)."""

    teams: frozenset[int] = frozenset()
    users: frozenset[int] = frozenset()
    baselines: frozenset[int] = frozenset()

    def keys(self) -> set[str]:
        """Return the owner keys of Candidate.owner these stand for."""
        return ({f"team:{t}" for t in self.teams} | {f"user:{u}" for u in self.users}
                | {f"baseline:{b}" for b in self.baselines})


def owners_of(ctx: ServiceContext, submission_ids: Iterable[int]) -> Owners:
    """Return the owners of some submissions (a team, else the uploader; a baseline is its own owner)."""
    teams, users, baselines = set(), set(), set()
    ids = sorted(set(submission_ids))
    for start in range(0, len(ids), CHUNK):
        for sub_id, user_id, team_id, is_baseline in ctx.session.execute(
                select(Submission.id, Submission.user_id, Submission.team_id, Submission.is_baseline)
                .where(Submission.id.in_(ids[start:start + CHUNK]))):
            if is_baseline:
                baselines.add(sub_id)
            elif team_id is not None:
                teams.add(team_id)
            else:
                users.add(user_id)
    return Owners(frozenset(teams), frozenset(users), frozenset(baselines))


def load_candidates(ctx: ServiceContext, *, phase: Phase, layout: BoardLayout,
                    owners: Owners | None = None) -> list[Candidate]:
    """Return the phase's scored submissions (of some owners only) with their active score and views' cells."""
    query = (
        select(Submission.id, Score.id, Submission.user_id, Submission.team_id, Submission.method,
               Submission.entry_metadata, Submission.is_baseline, Baseline.kind, Baseline.name, Submission.selected,
               Submission.moderation, Submission.created_at, Score.public_primary, Score.label_version,
               User.display_name, Team.name)
        .join(Score, Score.submission_id == Submission.id)
        .join(User, User.id == Submission.user_id)
        .outerjoin(Team, Team.id == Submission.team_id)
        .outerjoin(Baseline, Baseline.submission_id == Submission.id)
        .where(Submission.phase_id == phase.id, Submission.status == "scored", Score.retired_at.is_(None))
        .order_by(Score.id)
    )
    if owners is not None:
        query = query.where(or_(Submission.team_id.in_(owners.teams),
                                and_(Submission.team_id.is_(None), Submission.is_baseline.is_(False),
                                     Submission.user_id.in_(owners.users)),
                                Submission.id.in_(owners.baselines)))
    by_score: dict[int, Candidate] = {}
    latest: dict[int, int] = {}
    for (sub_id, score_id, user_id, team_id, method, metadata, is_baseline, kind, baseline_name, selected,
         moderation, created_at, public_primary, label_version, display_name, team) in (
            ctx.session.connection().execute(query)):
        name = (baseline_name or display_name) if is_baseline else (team or display_name)
        by_score[score_id] = Candidate(sub_id, score_id, user_id, team_id, method or "default", metadata,
                                       bool(is_baseline), kind == "builtin", bool(selected), moderation is not None,
                                       created_at, public_primary, label_version, name, team)
        latest[sub_id] = score_id  # one active score per submission; a duplicate keeps the last
    wanted = set(latest.values())
    metrics = list(dict.fromkeys([phase.primary_metric, *(v.metric for v in layout.views)]))
    cells = select(ScoreCell.score_id, ScoreCell.board, ScoreCell.path, ScoreCell.value, ScoreCell.lo, ScoreCell.hi,
                   ScoreCell.error)
    if owners is None:
        found = ctx.session.connection().execute(cells.where(ScoreCell.phase_id == phase.id,
                                                             ScoreCell.path.in_(metrics))).all()
    else:
        ids = sorted(wanted)
        found = [row for start in range(0, len(ids), CHUNK) for row in ctx.session.connection().execute(
            cells.where(ScoreCell.score_id.in_(ids[start:start + CHUNK]), ScoreCell.path.in_(metrics)))]
    for score_id, board, path, value, lo, hi, error in found:
        if score_id in wanted:
            by_score[score_id].cells[(board, path)] = (value, lo, hi, error)
    return [by_score[score_id] for score_id in wanted]


def first_scored(ctx: ServiceContext, phase: Phase, submission_ids: list[int] | None = None) -> dict[int, int]:
    """Return, per submission of the phase (or of these), the id of the first Score row it ever had."""
    query = (select(Score.submission_id, func.min(Score.id)).join(Submission, Submission.id == Score.submission_id)
             .where(Submission.phase_id == phase.id).group_by(Score.submission_id))
    if submission_ids is None:
        return {int(sub_id): int(first) for sub_id, first in ctx.session.execute(query)}
    out: dict[int, int] = {}
    for start in range(0, len(submission_ids), CHUNK):
        chunk = query.where(Score.submission_id.in_(submission_ids[start:start + CHUNK]))
        out.update({int(sub_id): int(first) for sub_id, first in ctx.session.execute(chunk)})
    return out


def ladder_decisions(ctx: ServiceContext, *, phase: Phase, layout: BoardLayout,
                     candidates: list[Candidate]) -> tuple[dict[int, LadderDecision], float] | None:
    """Return each participant submission's ladder decision and the step, or None when the ladder is off."""
    settings = probing_settings(phase)
    if not settings.ladder:
        return None
    step = settings.step(layout.n_primary)
    order = first_scored(ctx, phase, [c.submission_id for c in candidates if not c.is_baseline])
    owners: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if not c.is_baseline:
            owners[c.owner].append(c)
    decisions: dict[int, LadderDecision] = {}
    higher = higher_is_better(phase.primary_metric)
    for group in owners.values():
        group.sort(key=lambda c: (order.get(c.submission_id, 0), c.submission_id))
        decisions.update(ladder_walk([(c.submission_id, _released_value(c, phase)) for c in group], step=step,
                                     higher=higher))
    return decisions, step


def _released_value(c: Candidate, phase: Phase) -> float | None:
    """Return a candidate's exact public primary value, None where the open board shows none (too few answered)."""
    return c.public_primary if c.cells.get(("open", phase.primary_metric), NO_CELL)[0] is not None else None


def selection_pool(phase: Phase, candidates: list[Candidate]) -> set[int] | None:
    """Return the submissions the private ranking may use under final selection, or None when every one may."""
    limit = (phase.task_config or {}).get("final_selections")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return None
    higher = higher_is_better(phase.primary_metric)
    owners: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if not c.is_baseline:
            owners[c.owner].append(c)
    pool = {c.submission_id for c in candidates if c.is_baseline}
    for group in owners.values():
        chosen = [c for c in group if c.selected]
        if not chosen:
            chosen = sorted(group, key=lambda c: _order_key(c.public_primary, c, higher))[:limit]
        pool.update(c.submission_id for c in chosen)
    return pool


def _order_key(value: float | None, c: Candidate, higher: bool) -> tuple[bool, float, datetime, int]:
    """Return the ranking rule's sort key: value (missing last), then the earlier submission, then the lower id."""
    signed = 0.0 if value is None else (-value if higher else value)
    return (value is None, signed, c.created_at, c.submission_id)


def _laddered(cell: Cell, step: float) -> Cell:
    """Return a cell's figures rounded to the ladder step (its error as it is)."""
    value, lo, hi = (None if x is None else rounded_to_step(x, step) for x in cell[:3])
    return value, lo, hi, cell[3]


def entry_rows(*, phase: Phase, layout: BoardLayout, board: str, view_index: int, candidates: list[Candidate],
               ladder: tuple[dict[int, LadderDecision], float] | None, pool: set[int] | None) -> list[dict[str, Any]]:
    """Return each entry's row of one view on one board (its best candidate), not yet ranked."""
    metric, primary = layout.views[view_index].metric, phase.primary_metric
    higher = higher_is_better(metric)
    laddered = ladder if board == "open" else None
    step = None if laddered is None else laddered[1]
    entries: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if not c.moderated:
            entries[c.entry].append(c)
    rows = []
    for group in entries.values():
        shown = [c for c in group if c.is_baseline or board == "open" or pool is None or c.submission_id in pool]
        withheld = False
        if laddered is not None:
            released = [c for c in shown if c.is_baseline or laddered[0][c.submission_id].released]
            withheld = not released
            shown = released or [max(group, key=lambda c: c.submission_id)]
        if not shown:
            continue
        scored = [(c, _cell(c, board, metric, laddered, withheld, primary=primary)) for c in shown]
        c, cell = min(scored, key=lambda pair: _order_key(pair[1][0], pair[0], higher))
        rows.append({
            "phase_id": phase.id, "board": board, "view": view_index, "position": 0, "entry": c.entry,
            "submission_id": c.submission_id, "score_id": c.score_id,
            "user_id": None if c.is_baseline or c.team_id is not None else c.user_id, "team_id": c.team_id,
            "display_name": c.display_name[:120], "team": c.team, "method": c.method,
            "entry_metadata": c.metadata, "is_baseline": c.is_baseline, "builtin": c.builtin,
            "submitted_at": c.created_at, "submissions": len(group), "rank": None, "stat_rank": None,
            "p_vs_previous": None, "value": cell[0], "ci_lo": cell[1], "ci_hi": cell[2],
            "ladder_step": None if c.is_baseline else step, "withheld": withheld,
        })
    return rows


def _cell(c: Candidate, board: str, metric: str, ladder: tuple[dict[int, LadderDecision], float] | None,
          withheld: bool, *, primary: str) -> Cell:
    """Return the value a candidate shows on a board, under the ladder when it applies (its released value)."""
    if withheld:
        return NO_CELL
    cell = c.cells.get((board, metric), NO_CELL)
    if ladder is None or c.is_baseline:
        return cell
    value, lo, hi, error = _laddered(cell, ladder[1])
    return (ladder[0][c.submission_id].shown if metric == primary else value), lo, hi, error
