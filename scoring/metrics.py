"""The metrics of SPEC §3 as small pure functions over count tables.

Every slice is reduced to three tables before any metric is computed:

- ``cells``: shape ``(..., K, K + 1)``; ``cells[g, 0]`` counts abstentions on items of
  gold class ``g`` and ``cells[g, p + 1]`` answers ``p`` on them;
- ``groups``: shape ``(..., 2)``; groups with a wrong or unanswered item, and groups
  whose every item is right (``None`` when no item of the slice has a group);
- ``calibration``: shape ``(..., 10, 3)``; per confidence bin the answered items, the
  correct ones and the sum of their confidences (``None`` without confidences).

Leading dimensions are batch dimensions, so the same functions score one slice or a
thousand bootstrap resamples at once. A metric returns float64 with NaN for null.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
CountArray = npt.NDArray[np.int64]

CALIBRATION_BINS = 10


@dataclass(frozen=True)
class SliceCounts:
    """The count tables of one slice (or of a batch of resampled slices)."""

    cells: CountArray
    binary: bool
    groups: CountArray | None = None
    calibration: FloatArray | None = None

    @property
    def n(self) -> int:
        """Return the number of items of a single (unbatched) slice."""
        return int(self.cells.sum())


@dataclass(frozen=True)
class Metric:
    """A registered metric: its function, direction, and the table it reads."""

    name: str
    fn: Callable[[SliceCounts], FloatArray]
    higher_is_better: bool
    table: Literal["cells", "groups", "calibration"]
    has_ci: bool

    def applies(self, counts: SliceCounts) -> bool:
        """Return whether the slice has the table this metric reads."""
        if self.table == "groups":
            return counts.groups is not None
        if self.table == "calibration":
            return counts.calibration is not None
        return True


def _ratio(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """Return num / den as float64, NaN where den is 0."""
    num_f = np.asarray(num, dtype=np.float64)
    den_f = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den_f > 0, num_f / np.where(den_f > 0, den_f, 1.0), np.nan)


def totals(cells: CountArray) -> tuple[CountArray, CountArray, CountArray]:
    """Return the counts N, A and C of a cells table."""
    n = cells.sum(axis=(-2, -1))
    answered = cells[..., 1:].sum(axis=(-2, -1))
    correct = np.diagonal(cells[..., 1:], axis1=-2, axis2=-1).sum(axis=-1)
    return n, answered, correct


def accuracy(counts: SliceCounts) -> FloatArray:
    """Return C / N: abstentions count as wrong."""
    n, _, correct = totals(counts.cells)
    return _ratio(correct, n)


def answer_rate(counts: SliceCounts) -> FloatArray:
    """Return A / N."""
    n, answered, _ = totals(counts.cells)
    return _ratio(answered, n)


def selective_accuracy(counts: SliceCounts) -> FloatArray:
    """Return C / A, null when nothing was answered."""
    _, answered, correct = totals(counts.cells)
    return _ratio(correct, answered)


def _f1_scores(tp: CountArray, gold: CountArray, predicted: CountArray) -> FloatArray:
    """Return 2tp / (gold + predicted), i.e. 2tp / (2tp + fp + fn), 0 when both are 0."""
    f1 = _ratio(2 * tp, gold + predicted)
    return np.where(np.isnan(f1), 0.0, f1)


def macro_f1(counts: SliceCounts) -> FloatArray:
    """Return the mean per-class F1 over classes seen in gold labels or answers."""
    cells = counts.cells
    tp = np.diagonal(cells[..., 1:], axis1=-2, axis2=-1)
    gold = cells.sum(axis=-1)
    predicted = cells[..., 1:].sum(axis=-2)
    seen = (gold + predicted) > 0
    per_class = _f1_scores(tp, gold, predicted)
    return _ratio(np.where(seen, per_class, 0.0).sum(axis=-1), seen.sum(axis=-1))


def f1(counts: SliceCounts) -> FloatArray:
    """Return the F1 of the positive class (binary) or the macro F1 (multiple choice)."""
    if not counts.binary:
        return macro_f1(counts)
    cells = counts.cells
    tp = cells[..., 1, 2]
    predicted = cells[..., 0, 2] + tp
    gold = cells[..., 1, :].sum(axis=-1)
    f1_pos = _f1_scores(tp, gold, predicted)
    return np.where(cells.sum(axis=(-2, -1)) > 0, f1_pos, np.nan)


def group_accuracy(counts: SliceCounts) -> FloatArray:
    """Return the share of groups whose every item is answered correctly."""
    if counts.groups is None:
        raise ValueError("group_accuracy needs a groups table")
    return _ratio(counts.groups[..., 1], counts.groups.sum(axis=-1))


def ece(counts: SliceCounts) -> FloatArray:
    """Return the expected calibration error over answered items, null when A is 0."""
    if counts.calibration is None:
        raise ValueError("ece needs a calibration table")
    table = counts.calibration
    answered = table[..., 0].sum(axis=-1)
    # sum_b (n_b / A) |acc_b - conf_b| == sum_b |correct_b - confsum_b| / A
    gaps = np.abs(table[..., 1] - table[..., 2]).sum(axis=-1)
    return _ratio(gaps, answered)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accuracy", accuracy, True, "cells", True),
        Metric("answer_rate", answer_rate, True, "cells", True),
        Metric("selective_accuracy", selective_accuracy, True, "cells", True),
        Metric("f1", f1, True, "cells", True),
        Metric("macro_f1", macro_f1, True, "cells", True),
        Metric("group_accuracy", group_accuracy, True, "groups", True),
        Metric("ece", ece, False, "calibration", False),
    )
}
"""Every metric by name, in the order slice objects list them."""


def get_metric(name: str) -> Metric:
    """Return the registered metric called ``name``, or raise naming the valid ones."""
    try:
        return METRICS[name]
    except KeyError:
        valid = ", ".join(METRICS)
        raise KeyError(f"unknown metric {name!r}; valid metrics: {valid}") from None


def point_values(counts: SliceCounts) -> dict[str, float | None]:
    """Return every applicable metric of one slice, None where it is null."""
    out: dict[str, float | None] = {}
    for metric in METRICS.values():
        if metric.applies(counts):
            value = float(metric.fn(counts))
            out[metric.name] = None if np.isnan(value) else value
    return out
