"""The ladder (Blum & Hardt 2015): which public score a participant is shown (docs/PROBING.md).

Walking a participant's scored submissions to a phase in the order they were first scored
(the lowest Score id each ever had, so re-scoring keeps the order), a submission's public
primary value is *released* when there is no shown best yet or when it beats the shown
best by more than the step; it is then shown rounded to a multiple of the step and becomes
the shown best. Otherwise it is *held*: it shows the shown best and nothing else. The
decision is computed from the stored exact ``public_primary`` values whenever it is read,
so it needs no stored state and a rescore recomputes it consistently. The ladder governs
feedback while the phase is not closed; after close the ranking uses exact scores. Its
settings (step, on or off) are disclosure/probing.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from leaderboard.accounts import phase_status
from leaderboard.disclosure.probing import probing_settings
from leaderboard.entries import owner_filter
from leaderboard.models import Phase, Score, Submission
from leaderboard.platform import ServiceContext
from scoring import higher_is_better


@dataclass(frozen=True)
class LadderDecision:
    """What the ladder shows for one submission."""

    step: float
    released: bool
    shown: float | None  # the public primary value shown for this submission
    shown_by: int | None  # the submission whose release set ``shown``

    def to_json(self) -> dict[str, Any]:
        """Return the participant-facing ``feedback`` object of a result."""
        return {"rule": "ladder", "step": self.step, "released": self.released, "shown": self.shown,
                "shown_submission_id": self.shown_by}


def ladder_applies(phase: Phase) -> bool:
    """Return whether the phase's public feedback follows the ladder now (set to ladder and not closed)."""
    return probing_settings(phase).ladder and phase_status(phase) != "closed"


def ladder_walk(values: Sequence[tuple[int, float | None]], *, step: float, higher: bool) -> dict[int, LadderDecision]:
    """Return the ladder decision of each (submission id, exact public value), taken in the order given."""
    decisions: dict[int, LadderDecision] = {}
    best: float | None = None
    best_by: int | None = None
    for submission_id, exact in values:
        if exact is not None and (best is None or _beats(exact, best, step=step, higher=higher)):
            best, best_by = rounded_to_step(exact, step), submission_id
            decisions[submission_id] = LadderDecision(step, True, best, best_by)
        else:
            decisions[submission_id] = LadderDecision(step, False, best, best_by)
    return decisions


def _beats(exact: float, best: float, *, step: float, higher: bool) -> bool:
    """Return whether an exact value beats the shown best by more than the step."""
    return exact > best + step if higher else exact < best - step


def rounded_to_step(value: float, step: float) -> float:
    """Return value rounded to the nearest multiple of step (4 decimals, as shown), never leaving its range.

    A rate in [0, 1] stays in [0, 1] (a difference in [-1, 1] stays there): with a step
    of 1/sqrt(n) the multiple nearest 1.0 is often above it (1.003 at 1,838 items).
    """
    rounded = round(round(value / step) * step, 4)
    for bound in (1.0, -1.0):
        if min(bound, 0.0) <= value <= max(bound, 0.0):
            return min(max(rounded, min(bound, 0.0)), max(bound, 0.0))
    return rounded


def public_item_count(results: dict[str, Any], path: str = "accuracy") -> int:
    """Return how many public items (all of them without splits) the slice of a metric path holds in a result.

    The ladder's default step is 1/sqrt of it: one answer must move the ranked figure by
    less than half a step (board/layout.py's slice_items counts the same from the labels).
    """
    public = (results.get("splits") or {}).get("public") or results
    parts = path.split(".")
    if len(parts) == 1 or parts[0] == "pairs":
        return int(public.get("n_items") or 0)
    if parts[0] == "popularity":
        buckets = public.get("popularity") or {}
        names = ("head", "tail") if parts[1] in ("gap", "relative_drop") else (parts[1],)
        return min(int((buckets.get(name) or {}).get("n") or 0) for name in names)
    table = (public.get("breakdowns") or {}).get(parts[1]) or {}
    return int((table.get(".".join(parts[2:-1])) or {}).get("n") or 0)


def submission_decision(ctx: ServiceContext, *, submission: Submission, score: Score) -> LadderDecision | None:
    """Return the ladder decision of a participant's scored submission, or None when the ladder does not apply."""
    phase = submission.phase
    if submission.is_baseline or not ladder_applies(phase):
        return None
    return user_decisions(ctx, phase=phase, user_id=submission.user_id, team_id=submission.team_id,
                          results=score.results).get(submission.id)


def user_decisions(ctx: ServiceContext, *, phase: Phase, user_id: int, results: dict[str, Any],
                   team_id: int | None = None) -> dict[int, LadderDecision]:
    """Return the ladder decisions of every scored submission of one participant (or their team) in a phase.

    A team climbs one ladder: its members share their feedback as they share their quota.
    """
    rows = ctx.session.execute(
        select(Submission.id, Score.public_primary, Score.results)
        .join(Score, Score.submission_id == Submission.id)
        .where(Submission.phase_id == phase.id, owner_filter(user_id=user_id, team_id=team_id),
               Submission.is_baseline.is_(False), Submission.status == "scored", Score.retired_at.is_(None))
    ).all()
    values = [(row[0], row[1] if primary_shown(row[2], phase=phase) else None) for row in rows]
    return decide(ctx, phase=phase, values=values, results=results)


def decide(ctx: ServiceContext, *, phase: Phase, values: Iterable[tuple[int, float | None]],
           results: dict[str, Any], order: dict[int, int] | None = None) -> dict[int, LadderDecision]:
    """Return the ladder decisions of one participant's (submission id, exact public value) pairs.

    ``order`` (first_scored of these submissions) is looked up when not given.
    """
    latest = dict(values)  # one active score per submission; a duplicate keeps the last
    order = first_scored(ctx, latest) if order is None else order
    ordered = sorted(latest.items(), key=lambda item: (order.get(item[0], 0), item[0]))
    step = probing_settings(phase).step(public_item_count(results, phase.primary_metric))
    return ladder_walk(ordered, step=step, higher=higher_is_better(phase.primary_metric))


def first_scored(ctx: ServiceContext, submission_ids: Iterable[int]) -> dict[int, int]:
    """Return, per submission, the id of the first Score row it ever had (retired ones included)."""
    ids = list(submission_ids)
    if not ids:
        return {}
    rows = ctx.session.execute(
        select(Score.submission_id, func.min(Score.id)).where(Score.submission_id.in_(ids))
        .group_by(Score.submission_id)
    ).all()
    return {int(row[0]): int(row[1]) for row in rows}


def shown_primaries(ctx: ServiceContext, *, phase: Phase, submissions: list[Submission]) -> dict[int, float | None]:
    """Return the public primary value a participant is shown for each of their scored submissions.

    Exact feedback: the stored public value (rounded to 4 decimals); under the ladder:
    its decision's shown value. A submission not scored has no entry.
    """
    active = {sub.id: [s for s in sub.scores if s.retired_at is None]
              for sub in submissions if sub.status == "scored"}
    scores = {sub_id: rows[-1] for sub_id, rows in active.items() if rows}
    values = {sub_id: s.public_primary if primary_shown(s.results, phase=phase) else None
              for sub_id, s in scores.items()}
    if not scores or not ladder_applies(phase):
        return {sub_id: None if value is None else round(value, 4) for sub_id, value in values.items()}
    decisions = decide(ctx, phase=phase, values=list(values.items()), results=next(iter(scores.values())).results)
    return {sub_id: decision.shown for sub_id, decision in decisions.items()}


def primary_shown(results: dict[str, Any], *, phase: Phase) -> bool:
    """Return whether a file answers enough items of its primary metric's slice for the value to be shown at all.

    The slice's answered items are counted over the whole file (as disclosure/visibility.py
    counts them while a private split is hidden): below min_slice_items no page shows the
    value, not even under the ladder, so a file of two answers never reads their labels.
    """
    parts = phase.primary_metric.split(".")
    needed = probing_settings(phase).min_slice_items
    if len(parts) == 1 or parts[0] == "pairs":
        slices = [results.get("overall")]
        needed = min(needed, max(int(results.get("n_items") or 0), 1))  # a smaller phase: every item
    elif parts[0] == "popularity":
        buckets = results.get("popularity") or {}
        slices = [buckets.get("head"), buckets.get("tail")] if parts[1] in ("gap", "relative_drop") else [
            buckets.get(parts[1])]
    else:
        slices = [((results.get("breakdowns") or {}).get(parts[1]) or {}).get(".".join(parts[2:-1]))]
    return all(isinstance(part, dict) and int(part.get("answered") or 0) >= needed for part in slices)


def ladder_view(shown: dict[str, Any], decision: LadderDecision, *, metric: str) -> dict[str, Any]:
    """Return a participant's public result object under the ladder.

    Released: every score figure rounded to a multiple of the step, the primary metric
    set to the released value, and no counts. Held: the shown best alone.
    """
    overall: dict[str, Any]
    if decision.released:
        out = dict(_rounded_tree(shown, decision.step))
        overall = dict(out.get("overall") or {})
        overall[metric] = decision.shown
        out["overall"] = overall
    else:
        out = {key: shown[key] for key in ("n_items", "file") if key in shown}
        out["overall"] = {metric: decision.shown}
    out["feedback"] = decision.to_json()
    return out


COUNT_KEYS = frozenset({"answered", "correct"})
NOT_SCORES = frozenset({"n", "n_items", "n_pairs", "incomplete_pairs", "lo", "hi", "file", "feedback", "grid", "error"})


def _rounded_tree(value: Any, step: float, key: str | None = None) -> Any:
    """Return a result tree with counts dropped and every score figure rounded to the step.

    A slice already on a grid at least as coarse as the step (disclosure/precision.py) is
    kept as it is: rounding it again would only move its figures off their grid.
    """
    if key in NOT_SCORES:
        return value
    if isinstance(value, dict):
        if isinstance(value.get("grid"), float) and value["grid"] >= step:
            return _coarse_slice(value, step)
        return {k: _rounded_tree(v, step, k) for k, v in value.items() if k not in COUNT_KEYS and k != "exact"}
    if isinstance(value, list):
        return [_rounded_tree(item, step) for item in value]
    if isinstance(value, float):
        return rounded_to_step(value, step)
    return value


def _coarse_slice(part: dict[str, Any], step: float) -> dict[str, Any]:
    """Return a slice already on a grid at least as coarse as the step: only its exact (ranked) figures take the step.

    Rounding its gridded figures again would only move them off their grid.
    """
    exact = set(part.get("exact") or ())
    out: dict[str, Any] = {}
    for key, value in part.items():
        if key in COUNT_KEYS or key == "exact":
            continue
        if key in exact:
            out[key] = _rounded_tree(value, step, key)
        elif key == "ci" and isinstance(value, dict):
            out[key] = {m: _rounded_tree(bounds, step) if m in exact else bounds for m, bounds in value.items()}
        else:
            out[key] = value
    return out
