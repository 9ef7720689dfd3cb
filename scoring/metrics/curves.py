"""The long-tail curves of docs/LONG_TAIL.md: accuracy against popularity, risk against coverage.

**Popularity curve** (numeric popularity only). Cut points are
``numpy.quantile(values, [0.1, ..., 0.9])`` over every item of the label file that has
a numeric popularity, duplicates removed; an item falls in the first bin whose cut
point is >= its value, and the last bin takes the values above every cut point. So
there are at most ten bins, from least to most popular, the same in every split. A bin
with no item in the object at hand (a split, or a file whose values pile up on one
number) is left out; ``lo`` and ``hi`` are the smallest and largest value among the
bin's items in that object.

**Risk-coverage.** Answered items in order of confidence, highest first, items of
equal confidence as one group, then all abstentions as one last group counted wrong.
Each group is a point: coverage = items up to and including the group / N, risk =
wrong among them / items among them. ``aurc`` (``scoring.metrics.formulas.aurc``) sums
(coverage step) x risk over every point. ``risk_coverage`` lists at most 101 of the
points, each a real point of the curve: the first one, and for each j = 1..100 the
first point whose coverage reaches j / 100 (the test is done on integers: 100 x items
so far >= j x N), without repeats. The last is always (1, 1 - accuracy).

**Reliability diagram** (when ``confidence`` is given): the bins ``ece`` sums over
(docs/METRICS.md, Metrics: bin = min(floor(10 conf), 9) over the answered items), read off the same
calibration table: each bin with an answered item gives its confidence range
``lo``..``hi``, ``n`` answered items, their ``accuracy`` and mean ``confidence``, so
that ece = sum over bins of (n / answered) x |accuracy - confidence|.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.metrics.counts import CALIBRATION_BINS

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CURVE_QUANTILES = tuple(i / 10 for i in range(1, 10))
COVERAGE_STEPS = 100


def curve_cuts(values: FloatArray) -> FloatArray | None:
    """Return the distinct decile cut points of the numeric popularity values, None without any."""
    numeric = values[~np.isnan(values)]
    if numeric.size == 0:
        return None
    cuts = np.quantile(numeric, CURVE_QUANTILES)  # ascending
    return cuts[np.concatenate(([True], cuts[1:] != cuts[:-1]))]


def curve_codes(values: FloatArray, cuts: FloatArray) -> IntArray:
    """Return each item's bin: the first cut point >= its value (or the last bin), -1 without a value."""
    codes = np.searchsorted(cuts, values, side="left").astype(np.int64)
    codes[np.isnan(values)] = -1
    return codes


def bin_ranges(values: FloatArray, codes: IntArray, n_bins: int) -> tuple[FloatArray, FloatArray]:
    """Return per bin the smallest and largest value of the items with that code (NaN if none)."""
    keep = codes >= 0
    lo, hi = np.full(n_bins, np.inf), np.full(n_bins, -np.inf)
    np.minimum.at(lo, codes[keep], values[keep])
    np.maximum.at(hi, codes[keep], values[keep])
    empty = np.isinf(lo)
    lo[empty], hi[empty] = np.nan, np.nan
    return lo, hi


def risk_coverage(ranking: IntArray) -> list[list[float]]:
    """Return at most 101 [coverage, risk] points of a slice's ranking table (module docstring)."""
    items, wrong = ranking[:, 0], ranking[:, 1]
    present = items > 0
    so_far = np.cumsum(items[present])
    if so_far.size == 0:
        return []
    wrong_so_far = np.cumsum(wrong[present])
    total = int(so_far[-1])
    steps = np.arange(1, COVERAGE_STEPS + 1, dtype=np.int64) * total
    chosen = np.concatenate(([0], np.searchsorted(COVERAGE_STEPS * so_far, steps, side="left")))  # ascending
    chosen = chosen[np.concatenate(([True], chosen[1:] != chosen[:-1]))]
    coverage = so_far[chosen] / total
    risk = wrong_so_far[chosen] / so_far[chosen]
    return [[float(c), float(r)] for c, r in zip(coverage.tolist(), risk.tolist(), strict=True)]


def reliability(calibration: FloatArray) -> list[dict[str, Any]]:
    """Return the reliability diagram of a slice's calibration table: its bins with answered items."""
    out: list[dict[str, Any]] = []
    for b, (n, correct, confidence) in enumerate(calibration.tolist()):
        if n > 0:
            out.append({"lo": b / CALIBRATION_BINS, "hi": (b + 1) / CALIBRATION_BINS, "n": int(n),
                        "accuracy": correct / n, "confidence": confidence / n})
    return out
