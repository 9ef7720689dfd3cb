"""Complete head/tail pairs of a slice: counted by outcome, split into a head and a tail side, resampled whole.

A pair is complete in a slice when exactly two of the slice's items carry its code,
one head and one tail (the rule the result's ``pairs`` object counts by, docs/METRICS.md).
The ``pairs`` metrics of the registry (``avg_macro_f1``) read the two sides' cells
tables; ComparisonQA's evaluation script computes them over its records, each one
complete pair.

Their interval resamples pairs, not items: the head and the tail question of one pair
share an abstract question, so their answers are not independent, and resampling the
sides apart would give intervals too narrow. One resample draws the slice's P pairs
with replacement: the number of pairs of each distinct outcome (head cell, tail cell)
is Multinomial(P, count / P), drawn with ``numpy.random.Generator.multinomial`` from a
fixed seed, so the same pairs always give the same interval, whatever other slices are
scored. The cost is resamples x distinct outcomes (at most (K (K + 1))^2, 400 for four
options), which is why only the overall slice (of the file and of each split) counts
pairs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scoring.metrics.counts import CountArray, FloatArray, PairOutcomes, SliceCounts
from scoring.metrics.percentiles import percentile_interval
from scoring.metrics.registry import METRICS
from scoring.types import HEAD, TAIL

PAIR_STREAM = 5
"""The seed's stream for pair resamples: ``default_rng([seed, PAIR_STREAM])``."""


def pair_outcomes(
    *, cell: CountArray, pairs: npt.NDArray[np.int32], popularity: npt.NDArray[np.int8], k: int
) -> PairOutcomes | None:
    """Return the complete pairs among the items given (their cells, pair codes, buckets), None when none is."""
    chosen = pairs >= 0
    if not chosen.any():
        return None
    pair = pairs[chosen].astype(np.int64)
    size = int(pair.max()) + 1
    head, tail = popularity[chosen] == HEAD, popularity[chosen] == TAIL
    complete = _complete(pair, head, tail, size)
    if not complete.any():
        return None
    cells = cell[chosen].astype(np.float64)  # bincount weights; cell codes are small integers, exact
    head_cell = np.bincount(pair, weights=np.where(head, cells, 0.0), minlength=size)[complete].astype(np.int64)
    tail_cell = np.bincount(pair, weights=np.where(tail, cells, 0.0), minlength=size)[complete].astype(np.int64)
    width = k * (k + 1)
    codes, counts = np.unique(head_cell * width + tail_cell, return_counts=True)
    return PairOutcomes(head=codes // width, tail=codes % width, count=counts.astype(np.int64))


def has_complete_pair(pairs: npt.NDArray[np.int32], popularity: npt.NDArray[np.int8]) -> bool:
    """Return whether some pair code is carried by exactly two items, one head and one tail."""
    chosen = pairs >= 0
    if not chosen.any():
        return False
    pair = pairs[chosen].astype(np.int64)
    head, tail = popularity[chosen] == HEAD, popularity[chosen] == TAIL
    return bool(_complete(pair, head, tail, int(pair.max()) + 1).any())


def _complete(pair: CountArray, head: npt.NDArray[np.bool_], tail: npt.NDArray[np.bool_],
              size: int) -> npt.NDArray[np.bool_]:
    """Return per pair code whether exactly two items carry it, one head and one tail."""
    complete: npt.NDArray[np.bool_] = ((np.bincount(pair, minlength=size) == 2)
                                       & (np.bincount(pair, weights=head, minlength=size) == 1)
                                       & (np.bincount(pair, weights=tail, minlength=size) == 1))
    return complete


def pair_sides(outcomes: PairOutcomes, k: int) -> CountArray:
    """Return the (2, K, K + 1) cells of the head items and of the tail items of the pairs."""
    width = k * (k + 1)
    head = np.bincount(outcomes.head, weights=outcomes.count, minlength=width)
    tail = np.bincount(outcomes.tail, weights=outcomes.count, minlength=width)
    sides: CountArray = np.stack([head, tail]).astype(np.int64).reshape(2, k, k + 1)
    return sides


def resample_pairs(outcomes: PairOutcomes, k: int, *, resamples: int, seed: int) -> CountArray:
    """Return (R, 2, K, K + 1): the sides' cells of R resamples of the pairs, drawn with replacement."""
    total = int(outcomes.count.sum())
    drawn = np.random.default_rng([seed, PAIR_STREAM]).multinomial(total, outcomes.count / total, size=resamples)
    width = k * (k + 1)
    sides = np.stack([_sum_by(drawn, outcomes.head, width), _sum_by(drawn, outcomes.tail, width)], axis=1)
    out: CountArray = sides.reshape(resamples, 2, k, k + 1)
    return out


def _sum_by(drawn: CountArray, codes: CountArray, width: int) -> CountArray:
    """Return (R, width): per resample, the drawn counts of the outcomes summed by their code."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    out = np.zeros((len(drawn), width), dtype=np.int64)
    out[:, ordered[starts]] = np.add.reduceat(drawn[:, order], starts, axis=1)
    return out


def pair_intervals(counts: list[SliceCounts], *, resamples: int, seed: int) -> dict[str, FloatArray]:
    """Return {metric: (S, 2)} intervals of every pairs metric with one; NaN rows for slices without pairs."""
    metrics = [m for m in METRICS.values() if m.table == "pairs" and m.has_ci]
    out = {m.name: np.full((len(counts), 2), np.nan) for m in metrics}
    for s, slice_counts in enumerate(counts):
        outcomes = slice_counts.pair_outcomes
        if outcomes is None:
            continue
        k = slice_counts.cells.shape[-2]
        drawn = SliceCounts(cells=np.zeros((resamples, k, k + 1), dtype=np.int64), binary=slice_counts.binary,
                            pairs=resample_pairs(outcomes, k, resamples=resamples, seed=seed))
        for metric in metrics:
            if metric.applies(slice_counts):
                out[metric.name][s] = percentile_interval(metric.fn(drawn)[None])[0]
    return out
