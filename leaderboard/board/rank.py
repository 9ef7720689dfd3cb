"""Order a view's entry rows (docs/METRICS.md#figures-on-the-board): position, rank, stat_rank and p_vs_previous.

Rows sort by the view's shown value (direction from scoring's registry; a missing value
last), then the earlier submission, then the lower submission id; baselines take a
position but no rank. ``p_vs_previous`` depends only on the two scores (their bits never
change), the label file and the slice: a pair already on the board keeps its p-value,
others come from a per-process cache or are computed from the bits.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from leaderboard.board.cells import shown_split
from leaderboard.board.stats import McNEMAR_METRICS, p_vs_previous, slice_units, stat_ranks
from leaderboard.models import Phase, Score
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import ServiceContext
from scoring import higher_is_better

P_CACHE = "board_p_values"
P_CACHE_SIZE = 50_000
Previous = dict[int, tuple[int, float | None]]  # score id -> (the score ranked just above it, its p-value)


def sort_key(row: dict[str, Any], higher: bool) -> tuple[Any, ...]:
    """Return the ranking rule's key of a row: value (missing last), then the earlier submission, then the lower id."""
    value = row["value"]
    signed = 0.0 if value is None else (-value if higher else value)
    return (value is None, signed, row["submitted_at"], row["submission_id"])


def previous_pairs(rows: list[dict[str, Any]]) -> Previous:
    """Return, from rows in their stored order, each ranked row's row above and p-value."""
    ranked = [r for r in sorted(rows, key=lambda r: r["position"]) if r["rank"] is not None]
    return {row["score_id"]: (above["score_id"], row["p_vs_previous"]) for above, row in zip(ranked, ranked[1:],
                                                                                             strict=False)}


def rank_rows(ctx: ServiceContext, *, phase: Phase, board: str, metric: str, rows: list[dict[str, Any]],
              previous: Previous | None = None) -> list[dict[str, Any]]:
    """Return rows ordered with position, rank, stat_rank and p_vs_previous set."""
    higher = higher_is_better(metric)
    ordered = sorted(rows, key=lambda r: sort_key(r, higher))
    rank = 0
    for position, row in enumerate(ordered):
        rank += 0 if row["is_baseline"] else 1
        row.update(position=position, rank=None if row["is_baseline"] else rank, stat_rank=None, p_vs_previous=None)
    ranked = [r for r in ordered if r["rank"] is not None]
    intervals = [(r["ci_lo"], r["ci_hi"]) if r["ci_lo"] is not None and r["ci_hi"] is not None else None
                 for r in ranked]
    for row, stat in zip(ranked, stat_ranks(intervals, higher=higher), strict=True):
        row["stat_rank"] = stat
    laddered = any(r["ladder_step"] is not None for r in ranked)
    if not laddered and metric.split(".")[-1] in McNEMAR_METRICS:
        _fill_p_values(ctx, phase=phase, board=board, metric=metric, ranked=ranked, previous=previous or {})
    return ordered


P_VALUES_WHILE_OPEN_ONLY_WHEN_SAFE = True
"""The attack suite's switch: False shows McNemar p-values on every open board (the twin of its attack test)."""


def p_values_while_open(*, task_type: str, split: str, metric: str) -> bool:
    """Return whether an open board may show McNemar p-values (docs/PROBING.md, p-values on an open board).

    McNemar's p tells b + c, the items on which exactly one of two files is right, where the exact figures
    tell only b - c. An uploader who knows both files learns nothing from b + c only when it follows from
    the files themselves: a binary task (where two different answers always mean one is right), ranked by
    accuracy overall or of a slice (whose membership is public: scoring.public_fields), with no hidden
    private split deciding which differing items count. Group accuracy counts groups both files get wrong.
    """
    if not P_VALUES_WHILE_OPEN_ONLY_WHEN_SAFE:
        return True
    return task_type == "binary" and split == "all" and (metric == "accuracy" or metric.endswith(".accuracy"))


def _fill_p_values(ctx: ServiceContext, *, phase: Phase, board: str, metric: str, ranked: list[dict[str, Any]],
                   previous: Previous) -> None:
    """Set p_vs_previous of each ranked row but the first where both its value and the one above are shown."""
    split = shown_split(phase, board)
    if board != "closed" and not p_values_while_open(
            task_type=load_phase_labels(ctx, phase).config.task_type, split=split, metric=metric):
        return
    cache: dict[tuple[Any, ...], float] = ctx.runtime.caches.setdefault(P_CACHE, {})  # type: ignore[assignment]
    pairs = [(above, row, (phase.labels_sha256, split, metric, above["score_id"], row["score_id"]))
             for above, row in zip(ranked, ranked[1:], strict=False)
             if above["value"] is not None and row["value"] is not None]
    todo = []
    for above, row, key in pairs:
        before = previous.get(row["score_id"])
        if before is not None and before[0] == above["score_id"] and before[1] is not None:
            row["p_vs_previous"] = before[1]
        elif key in cache:
            row["p_vs_previous"] = cache[key]
        else:
            todo.append((above, row, key))
    if not todo:
        return
    needed = sorted({r["score_id"] for above, row, _ in todo for r in (above, row)})
    found = {sid: (bits, version) for sid, bits, version in ctx.session.execute(
        select(Score.id, Score.correct_bits, Score.label_version).where(Score.id.in_(needed)))}
    labels = load_phase_labels(ctx, phase)
    units = slice_units(labels, path=metric, split=split)
    if units is None:
        return
    for above, row, key in todo:
        first, second = found.get(above["score_id"]), found.get(row["score_id"])
        if first is None or second is None or first[0] is None or second[0] is None:
            continue
        if first[1] != phase.label_version or second[1] != phase.label_version:  # bits of older labels
            continue
        if len(cache) >= P_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = row["p_vs_previous"] = p_vs_previous(first[0], second[0], n=labels.n, units=units)
