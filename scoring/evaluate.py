"""Score a prediction file against a label set: the result object of docs/METRICS.md and docs/LONG_TAIL.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.labels import LabelSet
from scoring.metrics.batch import SliceBatch
from scoring.metrics.curves import bin_ranges, curve_codes, curve_cuts, reliability, risk_coverage
from scoring.metrics.registry import METRICS
from scoring.metrics.reuse import Known, Tables, slice_places
from scoring.metrics.slices import ItemScores, family_counts, item_scores, pair_summary
from scoring.types import BUCKET_NAMES, HEAD, SPLIT_NAMES, TAIL, Predictions

NEEDS_CONFIDENCE = tuple(m.name for m in METRICS.values() if m.table in ("calibration", "ranking"))

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Evaluation:
    """A result object and where each of its slices sits with the fingerprint of its tables (scoring.metrics.reuse)."""

    results: dict[str, Any]
    tables: Tables


def evaluate(labels: LabelSet, predictions: Predictions) -> dict[str, Any]:
    """Return every metric of every slice (docs/METRICS.md, docs/LONG_TAIL.md) as the result object.

    The same inputs always give the same object, keys in the same order. Every slice
    of the whole file and of each split is scored in one batch (``SliceBatch``).
    """
    return evaluation(labels, predictions).results


def evaluation(labels: LabelSet, predictions: Predictions, *, known: Known | None = None) -> Evaluation:
    """Return the result object of ``evaluate`` with its slice fingerprints; intervals in ``known`` are not drawn again.

    ``known`` ({fingerprint: ci}, scoring.metrics.reuse.known_intervals) comes from an
    earlier scoring of the same file; the result is the same object with or without it.
    """
    scores = item_scores(gold=labels.gold, answer=predictions.answer, confidence=predictions.confidence,
                         k=len(labels.config.options), binary=labels.config.task_type == "binary",
                         groups=labels.groups, pairs=labels.pairs, popularity=labels.popularity)
    batch = SliceBatch(known)
    curve = _curve_bins(labels)
    result = _body(labels, scores, np.ones(labels.n, dtype=bool), batch, curve)
    if labels.has_split:
        result["splits"] = {
            name: _body(labels, scores, labels.split == code, batch, curve)
            for code, name in enumerate(SPLIT_NAMES)
            if (labels.split == code).any()
        }
    batch.finish()
    for body in [result, *result.get("splits", {}).values()]:
        if "popularity" in body:
            _gap_and_drop(body["popularity"])
    # labels.warnings are notes for the organizer; a participant reads these ones
    result["warnings"] = [*predictions.warnings, *_own_warnings(labels, predictions)]
    return Evaluation(result, slice_places(result, batch.fingerprints))


def _own_warnings(labels: LabelSet, predictions: Predictions) -> list[str]:
    """Return notes about metrics the phase asks for that this file cannot have."""
    metric = labels.config.primary_metric
    if metric in NEEDS_CONFIDENCE and predictions.confidence is None:
        return [f"the phase ranks by {metric}, which needs a confidence column; this file has none"]
    return []


def _curve_bins(labels: LabelSet) -> tuple[IntArray, int] | None:
    """Return every item's popularity-curve bin (-1 for none) and the number of bins."""
    cuts = curve_cuts(labels.popularity_value)
    if cuts is None:
        return None
    return curve_codes(labels.popularity_value, cuts), len(cuts) + 1


def _body(
    labels: LabelSet, scores: ItemScores, mask: BoolArray, batch: SliceBatch, curve: tuple[IntArray, int] | None
) -> dict[str, Any]:
    """Return the result object (without splits and warnings) over the masked items, to be filled."""
    overall = family_counts(scores, np.where(mask, 0, -1), 1, with_pairs=True)[0]
    out: dict[str, Any] = {"n_items": int(mask.sum()), "overall": batch.add(overall)}
    if overall.ranking is not None:
        out["risk_coverage"] = risk_coverage(overall.ranking)
    if overall.calibration is not None:
        out["reliability"] = reliability(overall.calibration)
    breakdowns = _breakdowns(labels, scores, mask, batch)
    if breakdowns:
        out["breakdowns"] = breakdowns
    popularity = _popularity(labels, scores, mask, batch)
    if popularity is not None:
        out["popularity"] = popularity
    bins = _popularity_curve(labels, scores, mask, batch, curve)
    if bins:
        out["popularity_curve"] = bins
    pairs = pair_summary(pairs=labels.pairs, popularity=labels.popularity, correct=scores.correct, mask=mask)
    if pairs is not None:
        out["pairs"] = pairs
    return out


def _breakdowns(labels: LabelSet, scores: ItemScores, mask: BoolArray, batch: SliceBatch) -> dict[str, Any]:
    """Return {field: {value: slice}} for the configured fields some masked item has."""
    out: dict[str, Any] = {}
    for name in labels.config.breakdowns:
        membership = labels.memberships.get(name)
        if membership is None:
            continue
        codes = np.where(mask[membership.items], membership.codes, -1)
        counts = family_counts(scores, codes, len(membership.values), membership.items)
        table = {value: batch.add(c) for value, c in zip(membership.values, counts, strict=True) if c.n > 0}
        if table:
            out[name] = table
    return out


def _popularity(labels: LabelSet, scores: ItemScores, mask: BoolArray, batch: SliceBatch) -> dict[str, Any] | None:
    """Return the head/torso/tail slices, with gap and relative drop to be filled after the batch."""
    codes = np.where(mask, labels.popularity, -1)
    if not (codes >= 0).any():
        return None
    counts = family_counts(scores, codes.astype(np.int64), len(BUCKET_NAMES))
    out: dict[str, Any] = {name: batch.add(counts[code]) for code, name in BUCKET_NAMES.items() if counts[code].n > 0}
    out["gap"], out["relative_drop"] = {}, {}
    return out


def _gap_and_drop(popularity: dict[str, Any]) -> None:
    """Fill the head - tail gap and relative drop of every metric with an interval."""
    head, tail = popularity.get(BUCKET_NAMES[HEAD], {}), popularity.get(BUCKET_NAMES[TAIL], {})
    for metric in METRICS.values():
        h, t = head.get(metric.name), tail.get(metric.name)
        if not metric.has_ci or h is None or t is None:
            continue
        popularity["gap"][metric.name] = h - t
        popularity["relative_drop"][metric.name] = (h - t) / h if h != 0 else None


def _popularity_curve(
    labels: LabelSet, scores: ItemScores, mask: BoolArray, batch: SliceBatch, curve: tuple[IntArray, int] | None
) -> list[dict[str, Any]]:
    """Return the popularity-curve bins (docs/LONG_TAIL.md) with masked items, least popular first, to be filled."""
    if curve is None:
        return []
    codes, n_bins = np.where(mask, curve[0], -1), curve[1]
    lo, hi = bin_ranges(labels.popularity_value, codes, n_bins)
    counts = family_counts(scores, codes, n_bins, cells_only=True)
    return [batch.add_bin(c, lo=float(lo[b]), hi=float(hi[b])) for b, c in enumerate(counts) if c.n > 0]
