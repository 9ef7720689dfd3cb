"""Percentile bootstrap intervals from count tables, without resampling items one by one.

Why a multinomial draw is the item bootstrap: one bootstrap resample picks N items of
the slice uniformly with replacement. Each pick lands in cell c of the slice's
contingency table (gold class x answer) with probability n_c / N, independently of
the other picks, so the cell counts of the resample follow Multinomial(N, n / N)
exactly. Every cell metric (accuracy, answer_rate, selective_accuracy, f1, macro_f1)
is a function of those cell counts alone, so drawing the count table directly gives
the same distribution of resampled metric values as drawing N item indices, at a cost
that depends on the number of cells, not on N.

``group_accuracy`` resamples groups instead of items: of G groups, k are all right;
a resample of G groups with replacement has Binomial(G, k / G) all-right groups, and
the metric is that count over G.

Each slice gets a fresh generator with the same fixed seed, so an interval depends
only on the slice's counts, never on which slices were scored before it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from scoring.metrics import METRICS, SliceCounts

RESAMPLES = 1000
SEED = 20240611
PERCENTILES = (2.5, 97.5)


def resample(counts: SliceCounts, *, resamples: int = RESAMPLES, seed: int = SEED) -> SliceCounts:
    """Return a batch of ``resamples`` bootstrap count tables of one slice."""
    rng = np.random.default_rng(seed)
    cells = counts.cells
    n = int(cells.sum())
    flat = cells.ravel().astype(np.float64)
    if n > 0:
        drawn = rng.multinomial(n, flat / n, size=resamples)
    else:
        drawn = np.zeros((resamples, flat.size), dtype=np.int64)
    batch = replace(counts, cells=drawn.reshape((resamples, *cells.shape)), calibration=None)
    if counts.groups is not None:
        total = int(counts.groups.sum())
        share = counts.groups[1] / total if total else 0.0
        right = rng.binomial(total, share, size=resamples).astype(np.int64)
        batch = replace(batch, groups=np.stack([total - right, right], axis=-1))
    return batch


def intervals(
    counts: SliceCounts,
    points: dict[str, float | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, list[float] | None]:
    """Return the 95% percentile interval of every metric that carries one."""
    batch = resample(counts, resamples=resamples, seed=seed)
    out: dict[str, list[float] | None] = {}
    for metric in METRICS.values():
        if not metric.has_ci or not metric.applies(counts):
            continue
        if points.get(metric.name) is None:
            out[metric.name] = None
            continue
        values = metric.fn(batch)
        values = values[~np.isnan(values)]  # e.g. selective_accuracy of a resample with A = 0
        if values.size == 0:
            out[metric.name] = None
            continue
        lo, hi = np.percentile(values, PERCENTILES)
        out[metric.name] = [float(lo), float(hi)]
    return out
