"""Score a prediction file against a label set: the result object of SPEC §4."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.bootstrap import intervals
from scoring.labels import BUCKET_NAMES, HEAD, TAIL, LabelSet
from scoring.metrics import METRICS, SliceCounts, point_values, totals
from scoring.slices import ItemScores, family_counts, item_scores, pair_summary
from scoring.types import Predictions

SPLIT_NAMES = ("public", "private")


def evaluate(labels: LabelSet, predictions: Predictions) -> dict[str, Any]:
    """Return every metric of every slice (SPEC §3) as the SPEC §4 result object.

    The same inputs always give the same object, keys in the same order.
    """
    scores = item_scores(labels, predictions)
    result = _body(labels, scores, np.ones(labels.n, dtype=bool))
    if labels.has_split:
        result["splits"] = {
            name: _body(labels, scores, labels.split == code)
            for code, name in enumerate(SPLIT_NAMES)
            if (labels.split == code).any()
        }
    # labels.warnings are notes for the organizer; a participant reads these ones
    result["warnings"] = [*predictions.warnings, *_own_warnings(labels, predictions)]
    return result


def _own_warnings(labels: LabelSet, predictions: Predictions) -> list[str]:
    """Return notes about metrics the phase asks for that this file cannot have."""
    if labels.config.primary_metric == "ece" and predictions.confidence is None:
        return ["the phase ranks by ece, which needs a confidence column; this file has none"]
    return []


def slice_object(counts: SliceCounts) -> dict[str, Any]:
    """Return one slice's metrics, counts and bootstrap intervals."""
    points = point_values(counts)
    n, answered, correct = (int(x) for x in totals(counts.cells))
    return {**points, "n": n, "answered": answered, "correct": correct, "ci": intervals(counts, points)}


def _body(labels: LabelSet, scores: ItemScores, mask: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """Return the result object (without splits and warnings) over the masked items."""
    overall = family_counts(scores, np.where(mask, 0, -1), 1)[0]
    out: dict[str, Any] = {"n_items": int(mask.sum()), "overall": slice_object(overall)}
    breakdowns = _breakdowns(labels, scores, mask)
    if breakdowns:
        out["breakdowns"] = breakdowns
    popularity = _popularity(labels, scores, mask)
    if popularity is not None:
        out["popularity"] = popularity
    pairs = pair_summary(labels, scores, mask)
    if pairs is not None:
        out["pairs"] = pairs
    return out


def _breakdowns(labels: LabelSet, scores: ItemScores, mask: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """Return {field: {value: slice}} for the configured fields some masked item has."""
    out: dict[str, Any] = {}
    for name in labels.config.breakdowns:
        membership = labels.memberships.get(name)
        if membership is None:
            continue
        codes = np.where(mask[membership.items], membership.codes, -1)
        counts = family_counts(scores, codes, len(membership.values), membership.items)
        table = {value: slice_object(c) for value, c in zip(membership.values, counts) if c.n > 0}
        if table:
            out[name] = table
    return out


def _popularity(labels: LabelSet, scores: ItemScores, mask: npt.NDArray[np.bool_]) -> dict[str, Any] | None:
    """Return the head/torso/tail slices with the head-tail gap and relative drop."""
    codes = np.where(mask, labels.popularity, -1)
    if not (codes >= 0).any():
        return None
    counts = family_counts(scores, codes.astype(np.int64), len(BUCKET_NAMES))
    out: dict[str, Any] = {
        name: slice_object(counts[code]) for code, name in BUCKET_NAMES.items() if counts[code].n > 0
    }
    head, tail = out.get(BUCKET_NAMES[HEAD], {}), out.get(BUCKET_NAMES[TAIL], {})
    gap: dict[str, float] = {}
    drop: dict[str, float | None] = {}
    for metric in METRICS.values():
        h, t = head.get(metric.name), tail.get(metric.name)
        if not metric.has_ci or h is None or t is None:
            continue
        gap[metric.name] = h - t
        drop[metric.name] = (h - t) / h if h != 0 else None
    out["gap"], out["relative_drop"] = gap, drop
    return out
