"""Count tables for every slice of a family (overall, a breakdown, popularity) in one pass.

Each item gets a cell code (gold class x answer-or-abstain); a family's tables are one
``np.bincount`` over (slice code, cell). An item with a list of categories appears
once per value through its membership rows; rows with slice code -1 are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.labels import HEAD, TAIL, LabelSet
from scoring.metrics import CALIBRATION_BINS, SliceCounts
from scoring.types import ABSTAIN, Predictions

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


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


def item_scores(labels: LabelSet, predictions: Predictions) -> ItemScores:
    """Return the per-item cell codes of predictions aligned with the label set."""
    answer = np.asarray(predictions.answer).astype(np.int64)
    k = len(labels.config.options)
    if answer.shape != (labels.n,):
        raise ValueError(f"predictions cover {answer.shape} items, the label set has {labels.n}")
    if answer.size and (answer.min() < ABSTAIN or answer.max() >= k):
        raise ValueError("prediction answer codes must be -1 (abstain) or a class index")
    gold = labels.gold.astype(np.int64)
    answered = answer != ABSTAIN
    correct = answered & (answer == gold)
    calibration_cell = confidence = None
    if predictions.confidence is not None:
        confidence = np.asarray(predictions.confidence, dtype=np.float64)
        if np.isnan(confidence[answered]).any():
            raise ValueError("every answered item needs a confidence when the file has the column")
        bins = np.clip(np.floor(np.where(answered, confidence, 0.0) * CALIBRATION_BINS), 0, CALIBRATION_BINS - 1)
        calibration_cell = np.where(answered, 2 * bins.astype(np.int64) + correct, -1)
    return ItemScores(
        cell=gold * (k + 1) + answer + 1,
        correct=correct,
        k=k,
        binary=labels.config.task_type == "binary",
        groups=labels.groups,
        calibration_cell=calibration_cell,
        confidence=confidence,
    )


def family_counts(
    scores: ItemScores, codes: IntArray, n_slices: int, items: IntArray | None = None
) -> list[SliceCounts]:
    """Return the count tables of slices 0..n_slices-1; row r is item items[r] in slice codes[r]."""
    keep = codes >= 0
    codes = codes[keep].astype(np.int64)
    rows = np.flatnonzero(keep) if items is None else items[keep]
    size = scores.k * (scores.k + 1)
    cells = np.bincount(codes * size + scores.cell[rows], minlength=n_slices * size)
    cells = cells.reshape(n_slices, scores.k, scores.k + 1)
    groups = _group_tables(scores, codes, rows, n_slices)
    calibration = _calibration_tables(scores, codes, rows, n_slices)
    return [
        SliceCounts(
            cells=cells[s],
            binary=scores.binary,
            groups=groups[s] if groups is not None and groups[s].sum() > 0 else None,
            calibration=calibration[s] if calibration is not None else None,
        )
        for s in range(n_slices)
    ]


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


def pair_summary(labels: LabelSet, scores: ItemScores, mask: BoolArray) -> dict[str, Any] | None:
    """Return the head/tail pair shares of the masked items, None when none has a pair."""
    chosen = mask & (labels.pairs >= 0)
    if not chosen.any():
        return None
    pair = labels.pairs[chosen].astype(np.int64)
    size = int(pair.max()) + 1
    head = labels.popularity[chosen] == HEAD
    tail = labels.popularity[chosen] == TAIL
    right = scores.correct[chosen]

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
    for name, hits in shares.items():
        out[name] = float(hits.sum()) / n_pairs if n_pairs else None
    out["incomplete_pairs"] = int(((count > 0) & ~complete).sum())
    return out
