"""Every slice of a submission scored together: point values and intervals in one batch.

``evaluate`` adds each slice's count tables and gets back an empty dict at the place
the slice goes in the result; ``finish`` stacks the tables, computes each metric once
over all slices and the bootstrap of all slices in one draw (``scoring.metrics.bootstrap``),
then fills the dicts. A slice's numbers are the same as if it were scored alone. Intervals
known from an earlier scoring of the same tables (``scoring.metrics.reuse``) are taken, not
drawn; ``fingerprints`` names every filled dict's tables for the next time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.metrics.bootstrap import RESAMPLES, SEED, accuracy_intervals, batch_intervals
from scoring.metrics.counts import SliceCounts, totals
from scoring.metrics.formulas import accuracy, answer_rate
from scoring.metrics.pairs import pair_intervals
from scoring.metrics.registry import METRICS, get_metric
from scoring.metrics.reuse import Known, fingerprint

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

STACKED_RANKING_LIMIT = 1 << 22  # slices x levels stacked for one aurc call; past it, one call a slice


@dataclass(frozen=True)
class _Bin:
    """A popularity-curve bin waiting for its numbers."""

    counts: SliceCounts
    lo: float
    hi: float
    out: dict[str, Any]


class SliceBatch:
    """Slices of one submission, scored together when ``finish`` is called (taking the ``known`` intervals)."""

    def __init__(self, known: Known | None = None) -> None:
        self._slices: list[tuple[SliceCounts, dict[str, Any]]] = []
        self._bins: list[_Bin] = []
        self._known = known or {}
        self.fingerprints: dict[int, str] = {}
        """{id(filled dict): fingerprint of its tables}, once finished (the dicts live as long as the batch)."""

    def add(self, counts: SliceCounts) -> dict[str, Any]:
        """Return the slice object to be filled: metrics, n, answered, correct, ci."""
        out: dict[str, Any] = {}
        self._slices.append((counts, out))
        return out

    def add_bin(self, counts: SliceCounts, *, lo: float, hi: float) -> dict[str, Any]:
        """Return the curve bin object to be filled: lo, hi, n, accuracy, answer_rate, ci."""
        out: dict[str, Any] = {}
        self._bins.append(_Bin(counts, lo, hi, out))
        return out

    def finish(self) -> None:
        """Compute every slice's numbers and fill the objects handed out."""
        if self._slices:
            self._fill_slices()
        if self._bins:
            self._fill_bins()

    def _fill_slices(self) -> None:
        """Fill the slice objects: points over the stack, intervals from one bootstrap."""
        counts = [c for c, _ in self._slices]
        stack = _stack(counts)
        points = {m.name: m.fn(stack) for m in METRICS.values() if m.applies(stack) and m.table != "ranking"}
        if counts[0].ranking is not None:
            points["aurc"] = _aurc(counts)
        keys = [fingerprint(c, kind="slice") for c in counts]
        drawn = [s for s, key in enumerate(keys) if key not in self._known]
        bounds = _slice_bounds([counts[s] for s in drawn]) if drawn else {}
        place = {s: row for row, s in enumerate(drawn)}
        values = {name: _nulls(v.tolist()) for name, v in points.items()}
        n, answered, correct = (t.tolist() for t in totals(stack.cells))
        for s, (slice_counts, out) in enumerate(self._slices):
            self.fingerprints[id(out)] = keys[s]
            known = self._known.get(keys[s], {})
            ci: dict[str, list[float] | None] = {}
            for metric in METRICS.values():
                if not metric.applies(slice_counts):
                    continue
                value = out[metric.name] = values[metric.name][s]
                if metric.has_ci:
                    interval = bounds[metric.name][place[s]] if s in place else known.get(metric.name)
                    ci[metric.name] = None if value is None else interval
            out.update(n=n[s], answered=answered[s], correct=correct[s], ci=ci)

    def _fill_bins(self) -> None:
        """Fill the curve bins: accuracy and answer rate, and an interval for accuracy only."""
        stack = SliceCounts(cells=np.stack([b.counts.cells for b in self._bins]), binary=self._bins[0].counts.binary)
        acc, rate = accuracy(stack).tolist(), answer_rate(stack).tolist()
        keys = [fingerprint(b.counts, kind="bin") for b in self._bins]
        drawn = [s for s, key in enumerate(keys) if key not in self._known]
        bounds = accuracy_intervals(stack.cells[drawn]).tolist() if drawn else []
        place = {s: row for row, s in enumerate(drawn)}
        n = stack.cells.sum(axis=(1, 2)).tolist()
        for s, item in enumerate(self._bins):
            self.fingerprints[id(item.out)] = keys[s]
            ci = {"accuracy": bounds[place[s]]} if s in place else dict(self._known[keys[s]])
            item.out.update(lo=item.lo, hi=item.hi, n=n[s], accuracy=acc[s], answer_rate=rate[s], ci=ci)


def _slice_bounds(counts: list[SliceCounts]) -> dict[str, list[list[float] | None]]:
    """Return {metric: per slice [lo, hi] or None} of every interval of the slices, drawn in one bootstrap."""
    found = {**batch_intervals(_stack(counts)), **pair_intervals(counts, resamples=RESAMPLES, seed=SEED)}
    return {name: [None if lo != lo else [lo, hi] for lo, hi in v.tolist()] for name, v in found.items()}


def _nulls(values: list[float]) -> list[float | None]:
    """Return the values with NaN as None."""
    return [None if v != v else v for v in values]


def _stack(counts: list[SliceCounts]) -> SliceCounts:
    """Return the slices' tables stacked on a leading axis (groups and pairs as zeros where absent)."""
    groups = None
    if any(c.groups is not None for c in counts):
        groups = np.stack([c.groups if c.groups is not None else np.zeros(2, dtype=np.int64) for c in counts])
    calibration = None
    if counts[0].calibration is not None:
        calibration = np.stack([c.calibration for c in counts if c.calibration is not None])
    pairs = None
    if any(c.pairs is not None for c in counts):
        none = np.zeros((2, *counts[0].cells.shape), dtype=np.int64)
        pairs = np.stack([c.pairs if c.pairs is not None else none for c in counts])
    return SliceCounts(cells=np.stack([c.cells for c in counts]), binary=counts[0].binary, groups=groups,
                       calibration=calibration, pairs=pairs)


def _aurc(counts: list[SliceCounts]) -> FloatArray:
    """Return every slice's aurc: one call over the stacked tables when they fit, else one a slice."""
    aurc = get_metric("aurc")
    tables = [c.ranking for c in counts if c.ranking is not None]
    same = len({t.shape for t in tables}) == 1
    if same and len(tables) * len(tables[0]) <= STACKED_RANKING_LIMIT:
        return aurc.fn(_ranking_only(np.stack(tables)))
    return np.array([float(aurc.fn(_ranking_only(t))) for t in tables])


def _ranking_only(ranking: IntArray) -> SliceCounts:
    """Return count tables holding only a ranking table (all aurc reads)."""
    return SliceCounts(cells=np.zeros((0, 0), dtype=np.int64), binary=True, ranking=ranking)
