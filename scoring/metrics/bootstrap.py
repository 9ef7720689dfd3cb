"""Percentile bootstrap intervals for every slice of a submission, drawn together.

Why count tables are enough: one bootstrap resample picks N items of the slice
uniformly with replacement. Each pick lands in cell c of the slice's contingency
table (gold class x answer) with probability n_c / N, independently of the other
picks, so the resample's cell counts follow Multinomial(N, n / N) exactly. Every cell
metric (accuracy, answer_rate, selective_accuracy, f1, macro_f1) is a function of the
cell counts alone, so drawing the count table directly gives the same distribution of
resampled metric values as drawing N item indices, at a cost that does not grow with N.

How the table is drawn: as a chain of binomial splits, each an exact inverse-CDF draw
(``scoring.metrics.sampling``) for all slices at once. First correct vs not correct (so a
slice that needs only an accuracy interval, a popularity-curve bin, stops there), then
wrong vs abstained among the rest, then the correct, wrong and abstained counts spread
over their cells. ``group_accuracy`` resamples groups instead of items: of G groups,
k all right, a resample has Binomial(G, k / G) all-right groups.

Reproducibility: split j of every slice inverts the same row j of uniforms, drawn once
from the fixed seed. So the same counts always give the same interval, whether the
slice is scored alone or with any other slices, across runs and processes; and one
slice's counts never move another slice's interval.

Intervals are numpy's default percentile (linear interpolation) at 2.5 and 97.5 over
the resampled values that are not null (e.g. selective_accuracy of a resample that
answers nothing); an interval is null when none is (``scoring.metrics.percentiles``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from scoring.metrics.cdf_rows import rank_uniforms
from scoring.metrics.counts import SliceCounts
from scoring.metrics.percentiles import count_interval, percentile_interval
from scoring.metrics.registry import METRICS
from scoring.metrics.sampling import Float32Array, binomial, start_scores

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

RESAMPLES = 1000
SEED = 20240611
CHUNK_DRAWS = 8192  # resamples scored at once (slices x resamples): the working set fits a cache, and the
# temporaries stay small beside the drawn cells (a lower peak, which malloc keeps instead of faulting it in again)
GROUP_ROW, CORRECT_ROW = 0, 1  # rows of the uniforms; the cell splits follow


@functools.lru_cache(maxsize=16)
def uniforms(rows: int, *, resamples: int = RESAMPLES, seed: int = SEED) -> FloatArray:
    """Return the fixed (rows, 3, resamples) uniforms every slice's draws invert (read-only, drawn once).

    Rows [:, :2] come first from the seed's stream; the third uniform of each row, used
    only by slices whose table is split in three (scoring.metrics.sampling), from a
    stream of its own, so adding it changed no other draw.
    """
    drawn = np.concatenate((np.random.default_rng(seed).random((rows, 2, resamples)),
                            np.random.default_rng([seed, 3]).random((rows, 1, resamples))), axis=1)
    drawn.setflags(write=False)
    return drawn


@dataclass(frozen=True)
class Fixed:
    """The fixed uniforms (rows, 3, R) count tables draw from, with their start scores and ranks (sampling)."""

    u: FloatArray
    scores: Float32Array
    ranks: IntArray


@functools.lru_cache(maxsize=16)
def _fixed(k: int, resamples: int, seed: int) -> Fixed:
    """Return the uniforms, start scores and ranks that K-class count tables draw from (read-only, built once)."""
    u = uniforms(k * (k + 1) + 1, resamples=resamples, seed=seed)
    scores, ranks = start_scores(u), rank_uniforms(u)
    scores.setflags(write=False)
    ranks.setflags(write=False)
    return Fixed(u, scores, ranks)


def _share(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """Return num / den as float64, 0 where den is 0 (a split of nothing)."""
    num_f, den_f = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.divide(num_f, den_f, out=np.zeros(np.broadcast(num_f, den_f).shape), where=den_f > 0)


class _Splits:
    """Draws one binomial split after another, each with the next row of uniforms."""

    def __init__(self, fixed: Fixed, seed: int, row: int) -> None:
        self.fixed, self.seed, self.row = fixed, seed, row

    def split(self, total: IntArray, part: IntArray, whole: IntArray, out: IntArray | None = None) -> IntArray:
        """Return Binomial(total, part / whole) per slice and resample (written into ``out`` when given)."""
        fixed, row = self.fixed, self.row
        drawn = binomial(fixed.u[row], total, _share(part, whole), seed=self.seed, split=row, scores=fixed.scores[row],
                         ranks=fixed.ranks[row], out=out)
        self.row += 1
        return drawn

    def spread(self, total: IntArray, parts: list[IntArray], into: list[IntArray]) -> None:
        """Deal ``total`` over ``parts`` (counts per slice) like a multinomial, each part's draws ``into`` its array.

        ``total`` may be ``into[-1]`` itself: it is read before anything is written there.
        """
        left, mass = total, _total(parts)
        for i, part in enumerate(parts[:-1]):
            drawn = self.split(left, part, mass, out=into[i])
            # the last part gets what is left, written in its place (no copy)
            left = np.subtract(left, drawn, out=into[-1] if i == len(parts) - 2 else None)
            mass = mass - part
        if len(parts) == 1:
            into[0][...] = left


def _total(parts: list[IntArray]) -> IntArray:
    """Return the elementwise sum of equally shaped count arrays."""
    summed: IntArray = np.sum(parts, axis=0)
    return summed


def correct_draws(cells: IntArray, *, fixed: Fixed, seed: int = SEED) -> IntArray:
    """Return the resampled number of correct answers, (S, R), of stacked cells (S, K, K+1)."""
    n = cells.sum(axis=(1, 2))
    correct = np.diagonal(cells[:, :, 1:], axis1=1, axis2=2).sum(axis=1)
    return _Splits(fixed, seed, CORRECT_ROW).split(n, correct, n)


def draw_cells(cells: IntArray, *, fixed: Fixed, seed: int = SEED) -> IntArray:
    """Return resampled cells of stacked slices (S, K, K+1) as an (S, R, K, K+1) view."""
    k = cells.shape[1]
    n = cells.sum(axis=(1, 2))
    diagonal = [cells[:, g, g + 1] for g in range(k)]
    wrong = [cells[:, g, p + 1] for g in range(k) for p in range(k) if p != g]
    abstained = [cells[:, g, 0] for g in range(k)]
    out = np.empty((k, k + 1, len(n), fixed.u.shape[2]), dtype=np.int64)
    into_correct = [out[g, g + 1] for g in range(k)]
    into_wrong = [out[g, p + 1] for g in range(k) for p in range(k) if p != g]
    into_abstained = [out[g, 0] for g in range(k)]
    # each total is drawn into the last cell its spread writes (the spread reads it before), so no
    # total needs an array of its own: less fresh memory for the allocator to hand back and fault in again
    splits = _Splits(fixed, seed, CORRECT_ROW)
    n_correct = splits.split(n, _total(diagonal), n, out=into_correct[-1])
    n_wrong = splits.split(n[:, None] - n_correct, _total(wrong), n - _total(diagonal),
                           out=into_wrong[-1] if into_wrong else None)
    left = np.subtract(n[:, None], n_correct, out=into_abstained[-1])
    left -= n_wrong
    splits.spread(n_correct, diagonal, into_correct)
    splits.spread(n_wrong, wrong, into_wrong)
    splits.spread(left, abstained, into_abstained)
    return np.moveaxis(out, (0, 1), (2, 3))


def draw_groups(groups: IntArray, *, fixed: Fixed, seed: int = SEED) -> IntArray:
    """Return resampled (missed, all right) group counts, (S, R, 2), of stacked tables (S, 2)."""
    total = groups.sum(axis=1)
    right = _Splits(fixed, seed, GROUP_ROW).split(total, groups[:, 1], total)
    return np.stack([total[:, None] - right, right], axis=-1)


def resample(counts: SliceCounts, *, resamples: int = RESAMPLES, seed: int = SEED) -> SliceCounts:
    """Return bootstrap count tables: (R, ...) for one slice, (S, R, ...) for a stack of slices."""
    single = counts.cells.ndim == 2
    cells = counts.cells[None] if single else counts.cells
    k = cells.shape[1]
    fixed = _fixed(k, resamples, seed)
    batch = replace(counts, cells=draw_cells(cells, fixed=fixed, seed=seed), calibration=None, ranking=None,
                    pairs=None, pair_outcomes=None)  # pairs are resampled whole (scoring.metrics.pairs)
    if counts.groups is not None:
        groups = counts.groups[None] if single else counts.groups
        batch = replace(batch, groups=draw_groups(groups, fixed=fixed, seed=seed))
    if single:
        batch = replace(batch, cells=batch.cells[0], groups=None if batch.groups is None else batch.groups[0])
    return batch


def batch_intervals(counts: SliceCounts, *, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, FloatArray]:
    """Return {metric: (S, 2)} intervals of every metric with one, for stacked slices.

    Rows are NaN where no resample has a value; the caller nulls intervals of null points.
    The metrics are computed a few slices at a time (``CHUNK_DRAWS`` resamples in all),
    so that the working arrays stay in the processor's cache; a metric that is a count
    over the slice's items (``Metric.fraction``) sorts its integer counts.
    """
    batch = resample(counts, resamples=resamples, seed=seed)
    metrics = [m for m in METRICS.values() if m.has_ci and m.applies(batch)]
    counted = [m for m in metrics if m.fraction is not None]
    computed = [m for m in metrics if m.fraction is None]
    out = {m.name: np.empty((len(counts.cells), 2)) for m in metrics}
    step = max(1, CHUNK_DRAWS // resamples)
    for first in range(0, len(counts.cells), step):
        part = _rows(batch, slice(first, first + step))
        if counted:
            fractions = [m.fraction(part) for m in counted if m.fraction is not None]
            found = count_interval(np.concatenate([num for num, _ in fractions]),
                                   np.concatenate([den[:, 0] for _, den in fractions]))
            for metric, bounds in zip(counted, np.split(found, len(counted)), strict=True):
                out[metric.name][first : first + step] = bounds
        if computed:
            values = np.concatenate([m.fn(part) for m in computed])
            found = percentile_interval(values)
            for metric, bounds in zip(computed, np.split(found, len(computed)), strict=True):
                out[metric.name][first : first + step] = bounds
    return out


def _rows(counts: SliceCounts, rows: slice) -> SliceCounts:
    """Return the stacked slices ``rows`` of a stack (cells and groups only)."""
    groups = None if counts.groups is None else counts.groups[rows]
    return SliceCounts(cells=counts.cells[rows], binary=counts.binary, groups=groups)


def accuracy_intervals(cells: IntArray, *, resamples: int = RESAMPLES, seed: int = SEED) -> FloatArray:
    """Return (S, 2) accuracy intervals of stacked cells: the first split only."""
    k = cells.shape[1]
    fixed = _fixed(k, resamples, seed)
    out = np.empty((len(cells), 2))
    step = max(1, CHUNK_DRAWS // resamples)
    for first in range(0, len(cells), step):
        part = cells[first : first + step]
        drawn = correct_draws(part, fixed=fixed, seed=seed)
        out[first : first + step] = count_interval(drawn, part.sum(axis=(1, 2)))
    return out


def intervals(
    counts: SliceCounts,
    points: dict[str, float | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, list[float] | None]:
    """Return the 95% percentile interval of every metric of one slice that carries one."""
    stacked = replace(
        counts,
        cells=counts.cells[None],
        groups=None if counts.groups is None else counts.groups[None],
        calibration=None,
        ranking=None,
    )
    found = batch_intervals(stacked, resamples=resamples, seed=seed)
    out: dict[str, list[float] | None] = {}
    for name, bounds in found.items():
        lo, hi = bounds[0]
        out[name] = None if points.get(name) is None or np.isnan(lo) else [float(lo), float(hi)]
    return out
