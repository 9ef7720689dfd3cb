"""The leaderboard of a phase: one row per participant, baselines flagged, a stated rule.

Ranking rule (also stated on the page): each participant's best active score on the
shown split by the phase's primary metric (direction from scoring's metric
registry); ties go to the earlier submission, then to the lower submission id.
A missing (null) primary value ranks last. Baselines are rows too, without a rank.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from leaderboard.models import Baseline, Phase, Score, Submission, User
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import Forbidden
from leaderboard.services.labelsets import higher_is_better, primary_metric
from leaderboard.services.permissions import can_manage
from leaderboard.services.phases import get_phase, phase_status
from leaderboard.services.visibility import round_floats, visible_results

SPLIT_WORDS = {"public": "the public split", "private": "the private split", "all": "all items"}


@dataclass(frozen=True)
class Row:
    """One line of the leaderboard; results are already redacted and rounded."""

    rank: int | None  # None for baselines
    display_name: str
    submission_id: int
    is_baseline: bool
    baseline_name: str | None
    submitted_at: datetime
    results: dict[str, Any]
    primary: float | None
    entries: int = 1  # scored submissions of this participant in the phase


@dataclass(frozen=True)
class Leaderboard:
    """A ranked phase: which split is shown, by which metric, under which rule."""

    phase: Phase
    split: str  # "public" | "private" | "all"
    primary_metric: str
    rule: str
    rows: list[Row]
    higher_is_better: bool = True


@dataclass(frozen=True)
class _Entry:
    """A scored submission before grouping."""

    submission: Submission
    score: Score
    display_name: str
    baseline_name: str | None
    primary: float | None
    builtin: bool = False  # a platform baseline: shown with its overall scores only


def shown_split(phase: Phase) -> str:
    """Return the split a leaderboard shows: public while open, private after close, else all."""
    if not phase.has_private_split:
        return "all"
    return "private" if phase_status(phase) == "closed" else "public"


def leaderboard(ctx: ServiceContext, *, phase_id: int, viewer: User | None = None) -> Leaderboard:
    """Return the ranked leaderboard of a phase as the viewer may see it."""
    phase = get_phase(ctx, phase_id)
    if phase.leaderboard_visibility == "hidden" and not can_manage(phase.competition, viewer):
        raise Forbidden("The organizers keep the leaderboard of this phase hidden.")
    split, metric = shown_split(phase), primary_metric(phase)
    higher = higher_is_better(metric)
    groups: dict[tuple[str, int], list[_Entry]] = {}
    for entry in _entries(ctx, phase, split):
        sub = entry.submission
        key = ("baseline", sub.id) if sub.is_baseline else ("user", sub.user_id)
        groups.setdefault(key, []).append(entry)
    best = sorted(((min(g, key=lambda e: _order(e, higher)), len(g)) for g in groups.values()),
                  key=lambda pair: _order(pair[0], higher))
    rows, rank = [], 0
    for entry, count in best:
        rank += 0 if entry.submission.is_baseline else 1
        rows.append(_row(entry, phase, None if entry.submission.is_baseline else rank, count))
    return Leaderboard(phase=phase, split=split, primary_metric=metric, rule=rule_sentence(metric, split, higher),
                       rows=rows, higher_is_better=higher)


def rule_sentence(metric: str, split: str, higher: bool) -> str:
    """Return the ranking rule as shown on the page."""
    return (f"Each participant's best submission is ranked by {metric} on {SPLIT_WORDS[split]} "
            f"({'higher' if higher else 'lower'} is better); ties go to the earlier submission, "
            "then to the lower submission id. Baselines are shown for reference and take no rank.")


def leaderboard_csv(board: Leaderboard) -> str:
    """Return the leaderboard as CSV: rank, name, flags, the primary metric and flattened results."""
    extra = _csv_columns(board)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["rank", "name", "is_baseline", "submission_id", "submitted_at", board.primary_metric] + extra)
    for row in board.rows:
        flat = _flatten(row.results)
        writer.writerow([
            "" if row.rank is None else row.rank, _csv_safe(row.display_name), str(row.is_baseline).lower(),
            row.submission_id, row.submitted_at.isoformat(timespec="seconds") + "Z",
            "" if row.primary is None else row.primary,
        ] + ["" if flat.get(c) is None else flat[c] for c in extra])
    return out.getvalue()


def _entries(ctx: ServiceContext, phase: Phase, split: str) -> list[_Entry]:
    """Return every scored submission of the phase with its active score (latest if several)."""
    query = (
        select(Score, Submission, User.display_name, Baseline.name, Baseline.kind)
        .join(Submission, Score.submission_id == Submission.id)
        .join(User, Submission.user_id == User.id)
        .outerjoin(Baseline, Baseline.submission_id == Submission.id)
        .where(Submission.phase_id == phase.id, Submission.status == "scored", Score.retired_at.is_(None))
        .order_by(Score.id)
    )
    latest: dict[int, _Entry] = {}
    for score, submission, name, baseline_name, kind in ctx.session.execute(query):
        value = score.private_primary if split == "private" else score.public_primary
        latest[submission.id] = _Entry(submission, score, name, baseline_name, value, builtin=kind == "builtin")
    return list(latest.values())


def _order(entry: _Entry, higher: bool) -> tuple[bool, float, datetime, int]:
    """Return the sort key of the ranking rule: value (nulls last), then time, then id."""
    value = entry.primary
    signed = 0.0 if value is None else (-value if higher else value)
    return (value is None, signed, entry.submission.created_at, entry.submission.id)


def _row(entry: _Entry, phase: Phase, rank: int | None, count: int) -> Row:
    """Return the leaderboard row of one entry."""
    sub = entry.submission
    name = (entry.baseline_name or sub.description or "Baseline") if sub.is_baseline else entry.display_name
    return Row(rank=rank, display_name=name, submission_id=sub.id, is_baseline=sub.is_baseline,
               baseline_name=entry.baseline_name if sub.is_baseline else None, submitted_at=sub.created_at,
               results=visible_results(entry.score.results, phase=phase, overall_only=entry.builtin),
               primary=round_floats(entry.primary), entries=count)


def _flatten(results: dict[str, Any]) -> dict[str, Any]:
    """Return the metrics of a (visible) results object as flat 'slice.metric' columns, intervals left out."""
    flat: dict[str, Any] = {}
    for metric, value in (results.get("overall") or {}).items():
        if metric != "ci":
            flat[f"overall.{metric}"] = value
    for bucket, metrics in (results.get("popularity") or {}).items():
        for metric, value in (metrics or {}).items():
            if metric != "ci" and not isinstance(value, (dict, list)):
                flat[f"popularity.{bucket}.{metric}"] = value
    for field, values in (results.get("breakdowns") or {}).items():
        for value_name, metrics in (values or {}).items():
            for metric, value in (metrics or {}).items():
                if metric != "ci" and not isinstance(value, (dict, list)):
                    flat[f"{field}.{value_name}.{metric}"] = value
    return flat


def _csv_columns(board: Leaderboard) -> list[str]:
    """Return the flattened result columns present in any row, overall first, in first-seen order."""
    seen: dict[str, None] = {}
    for row in board.rows:
        for column in _flatten(row.results):
            seen.setdefault(column, None)
    order = {column: i for i, column in enumerate(seen)}
    return sorted(seen, key=lambda c: (not c.startswith("overall."), not c.startswith("popularity."), order[c]))


def _csv_safe(text: str) -> str:
    """Return text that a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
