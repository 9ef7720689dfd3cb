"""Count tables for every slice of a family (overall, a breakdown, popularity) in one pass.

Each item gets a cell code (gold class x answer-or-abstain); a family's tables are one
``np.bincount`` over (slice code, cell). An item with a list of categories appears
once per value through its membership rows; rows with slice code -1 are left out.

With confidences, each item also gets a confidence level (0 for the highest
confidence of the file, then down; the abstentions share the last level), and a
family's ranking tables (items and wrong items per level, for ``aurc`` and the
risk-coverage curve) are one more ``np.bincount`` over (slice code, level); when
slices x levels would be too large to hold densely (a million distinct confidences),
each slice keeps only its own levels, found by sorting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.metrics.counts import CALIBRATION_BINS, PairOutcomes, SliceCounts
from scoring.metrics.pairs import pair_outcomes, pair_sides
from scoring.metrics.registry import PAIR_SHARES
from scoring.types import ABSTAIN, HEAD, TAIL

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

DENSE_RANKING_LIMIT = 1 << 22  # slices x levels of a family's dense ranking tables


@dataclass(frozen=True)
class ItemScores:
    """Per-item facts the slices count over."""

    cell: IntArray  # gold * (K + 1) + answer + 1 (answer -1 is an abstention)
    correct: BoolArray
    k: int
    binary: bool
    groups: npt.NDArray[np.int32]
    calibration_cell: IntArray | None  # 2 * confidence bin + (1 if right), -1 on abstentions
    confidence: npt.NDArray[np.float64] | None
    level: IntArray | None = None  # confidence level, most confident 0; abstentions n_levels - 1
    n_levels: int = 0
    pairs: npt.NDArray[np.int32] | None = None  # pair code or -1; None unless multiple choice with pairs
    popularity: npt.NDArray[np.int8] | None = None  # popularity bucket code, beside ``pairs``


def item_scores(
    *,
    gold: npt.NDArray[np.int8],
    answer: npt.NDArray[np.int8],
    confidence: npt.NDArray[np.float64] | None,
    k: int,
    binary: bool,
    groups: npt.NDArray[np.int32],
    pairs: npt.NDArray[np.int32] | None = None,
    popularity: npt.NDArray[np.int8] | None = None,
) -> ItemScores:
    """Return the per-item cell codes of answers (-1 abstains) aligned with the gold class codes.

    ``pairs`` and ``popularity`` are kept for the pairs metrics, which only multiple
    choice has (``scoring.metrics.pairs``).
    """
    answers = np.asarray(answer).astype(np.int64)
    if answers.shape != (len(gold),):
        raise ValueError(f"predictions cover {answers.shape} items, the label set has {len(gold)}")
    if answers.size and (answers.min() < ABSTAIN or answers.max() >= k):
        raise ValueError("prediction answer codes must be -1 (abstain) or a class index")
    golds = gold.astype(np.int64)
    answered = answers != ABSTAIN
    correct = answered & (answers == golds)
    calibration_cell = confidences = level = None
    if confidence is not None:
        confidences = np.asarray(confidence, dtype=np.float64)
        if np.isnan(confidences[answered]).any():
            raise ValueError("every answered item needs a confidence when the file has the column")
        bins = np.clip(np.floor(np.where(answered, confidences, 0.0) * CALIBRATION_BINS), 0, CALIBRATION_BINS - 1)
        calibration_cell = np.where(answered, 2 * bins.astype(np.int64) + correct, -1)
        level = _confidence_levels(confidences, answered)
    return ItemScores(
        cell=golds * (k + 1) + answers + 1,
        correct=correct,
        k=k,
        binary=binary,
        groups=groups,
        calibration_cell=calibration_cell,
        confidence=confidences,
        level=level,
        n_levels=0 if level is None else int(level.max(initial=0)) + 1,
        **_pair_fields(pairs, popularity, binary=binary),
    )


def _pair_fields(pairs: npt.NDArray[np.int32] | None, popularity: npt.NDArray[np.int8] | None, *,
                 binary: bool) -> dict[str, Any]:
    """Return the ItemScores pair fields: set for a multiple-choice task whose items have pairs."""
    if binary or pairs is None or popularity is None or not (pairs >= 0).any():
        return {}
    return {"pairs": pairs, "popularity": popularity}


def _confidence_levels(confidence: npt.NDArray[np.float64], answered: BoolArray) -> IntArray:
    """Return each item's rank among the distinct confidences, highest 0; abstentions last."""
    distinct, inverse = np.unique(-confidence[answered], return_inverse=True)
    level = np.full(len(confidence), len(distinct), dtype=np.int64)
    level[answered] = inverse
    return level


def family_counts(
    scores: ItemScores, codes: IntArray, n_slices: int, items: IntArray | None = None, *, cells_only: bool = False,
    with_pairs: bool = False,
) -> list[SliceCounts]:
    """Return the count tables of slices 0..n_slices-1; row r is item items[r] in slice codes[r].

    ``cells_only`` leaves out the group, calibration and ranking tables (popularity-curve bins);
    ``with_pairs`` adds the pairs tables (the overall slices).
    """
    keep = codes >= 0
    codes = codes[keep].astype(np.int64)
    rows = np.flatnonzero(keep) if items is None else items[keep]
    size = scores.k * (scores.k + 1)
    cells = np.bincount(codes * size + scores.cell[rows], minlength=n_slices * size)
    cells = cells.reshape(n_slices, scores.k, scores.k + 1)
    if cells_only:
        return [SliceCounts(cells=cells[s], binary=scores.binary) for s in range(n_slices)]
    groups = _group_tables(scores, codes, rows, n_slices)
    calibration = _calibration_tables(scores, codes, rows, n_slices)
    ranking = ranking_tables(scores, codes, rows, n_slices)
    outcomes: list[PairOutcomes | None] = [None] * n_slices
    if with_pairs:
        outcomes = _pair_tables(scores, codes, rows, n_slices)
    sides = [None if o is None else pair_sides(o, scores.k) for o in outcomes]
    return [
        SliceCounts(
            cells=cells[s],
            binary=scores.binary,
            groups=groups[s] if groups is not None and groups[s].sum() > 0 else None,
            calibration=calibration[s] if calibration is not None else None,
            ranking=ranking[s] if ranking is not None else None,
            pairs=sides[s],
            pair_outcomes=outcomes[s],
        )
        for s in range(n_slices)
    ]


def _pair_tables(scores: ItemScores, codes: IntArray, rows: IntArray, n_slices: int) -> list[PairOutcomes | None]:
    """Return each slice's complete pairs by outcome (None where it has none, or the task has no pairs)."""
    if scores.pairs is None or scores.popularity is None:
        return [None] * n_slices
    cell, pairs, popularity = scores.cell[rows], scores.pairs[rows], scores.popularity[rows]
    return [pair_outcomes(cell=cell[codes == s], pairs=pairs[codes == s], popularity=popularity[codes == s],
                          k=scores.k) for s in range(n_slices)]


def _group_tables(scores: ItemScores, codes: IntArray, rows: IntArray, n_slices: int) -> IntArray | None:
    """Return per slice (groups with a miss, groups all right), None when no row has a group."""
    group = scores.groups[rows].astype(np.int64)
    has = group >= 0
    if not has.any():
        return None
    n_groups = int(group.max()) + 1
    keys = codes[has] * n_groups + group[has]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    missed = np.add.reduceat((~scores.correct[rows][has][order]).astype(np.int64), starts) > 0
    slice_of = keys[starts] // n_groups
    total = np.bincount(slice_of, minlength=n_slices)
    right = np.bincount(slice_of[~missed], minlength=n_slices)
    return np.stack([total - right, right], axis=-1)


def _calibration_tables(
    scores: ItemScores, codes: IntArray, rows: IntArray, n_slices: int
) -> npt.NDArray[np.float64] | None:
    """Return per slice and bin (answered, correct, sum of confidences)."""
    if scores.calibration_cell is None or scores.confidence is None:
        return None
    cell = scores.calibration_cell[rows]
    answered = cell >= 0
    keys = codes[answered] * (2 * CALIBRATION_BINS) + cell[answered]  # (slice, bin, right)
    size = n_slices * CALIBRATION_BINS
    by_right = np.bincount(keys, minlength=2 * size).reshape(size, 2)
    confidence = np.bincount(keys >> 1, weights=scores.confidence[rows[answered]], minlength=size)
    table = np.stack([by_right.sum(axis=1), by_right[:, 1], confidence], axis=-1).astype(np.float64)
    return table.reshape(n_slices, CALIBRATION_BINS, 3)


def ranking_tables(
    scores: ItemScores, codes: IntArray, rows: IntArray, n_slices: int
) -> IntArray | list[IntArray] | None:
    """Return per slice its (items, wrong) per confidence level, most confident first.

    Dense (every level of the file, zeros included) when it fits, else per slice only
    the levels it has; None without confidences.
    """
    if scores.level is None:
        return None
    levels = scores.n_levels
    keys = codes * levels + scores.level[rows]
    wrong = (~scores.correct[rows]).astype(np.int64)
    if n_slices * levels <= DENSE_RANKING_LIMIT:
        items = np.bincount(keys, minlength=n_slices * levels)
        missed = np.bincount(keys, weights=wrong, minlength=n_slices * levels).astype(np.int64)
        return np.stack([items, missed], axis=-1).reshape(n_slices, levels, 2)
    if keys.size == 0:
        return [np.zeros((0, 2), dtype=np.int64) for _ in range(n_slices)]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    table = np.stack([np.diff(np.append(starts, len(keys))), np.add.reduceat(wrong[order], starts)], axis=-1)
    bounds = np.searchsorted(keys[starts] // levels, np.arange(n_slices + 1))
    tables: list[IntArray] = [table[bounds[s] : bounds[s + 1]] for s in range(n_slices)]
    return tables


def pair_summary(
    *, pairs: npt.NDArray[np.int32], popularity: npt.NDArray[np.int8], correct: BoolArray, mask: BoolArray
) -> dict[str, Any] | None:
    """Return the head/tail pair shares of the masked items, None when none has a pair (code -1)."""
    chosen = mask & (pairs >= 0)
    if not chosen.any():
        return None
    pair = pairs[chosen].astype(np.int64)
    size = int(pair.max()) + 1
    head = popularity[chosen] == HEAD
    tail = popularity[chosen] == TAIL
    right = correct[chosen]

    def per_pair(weights: BoolArray) -> IntArray:
        """Return per pair code the number of its items where ``weights`` holds."""
        return np.bincount(pair, weights=weights, minlength=size).astype(np.int64)

    count = np.bincount(pair, minlength=size)
    complete = (count == 2) & (per_pair(head) == 1) & (per_pair(tail) == 1)
    head_right = per_pair(head & right)[complete] > 0
    tail_right = per_pair(tail & right)[complete] > 0
    n_pairs = int(complete.sum())
    out: dict[str, Any] = {"n_pairs": n_pairs}
    shares = {
        "both_correct": head_right & tail_right,
        "head_only": head_right & ~tail_right,
        "tail_only": ~head_right & tail_right,
        "neither": ~head_right & ~tail_right,
    }
    for name in PAIR_SHARES:
        hits = shares[name]
        out[name] = float(hits.sum()) / n_pairs if n_pairs else None
    out["incomplete_pairs"] = int(((count > 0) & ~complete).sum())
    return out
