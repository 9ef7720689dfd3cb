"""The metrics of docs/METRICS.md (Metrics) as small pure functions over count tables (``scoring.metrics.counts``).

Each takes a ``SliceCounts`` (one slice, or a batch along leading dimensions) and
returns float64 with NaN for null. The registry (``scoring.metrics.registry``) names
them, with their direction and whether they carry an interval.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scoring.metrics.counts import CountArray, FloatArray, SliceCounts


def _ratio(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """Return num / den as float64, NaN where den is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.asarray(np.true_divide(num, den, dtype=np.float64))
    if out.ndim == 0:
        return np.asarray(np.nan if np.asarray(den) <= 0 else out)
    np.copyto(out, np.nan, where=np.asarray(den) <= 0)
    return out


def accuracy_fraction(counts: SliceCounts) -> tuple[CountArray, CountArray]:
    """Return (C, N), the counts accuracy divides."""
    n, _, correct = counts.sums
    return correct, n


def accuracy(counts: SliceCounts) -> FloatArray:
    """Return C / N: abstentions count as wrong."""
    return _ratio(*accuracy_fraction(counts))


def answer_rate_fraction(counts: SliceCounts) -> tuple[CountArray, CountArray]:
    """Return (A, N), the counts answer_rate divides."""
    n, answered, _ = counts.sums
    return answered, n


def answer_rate(counts: SliceCounts) -> FloatArray:
    """Return A / N."""
    return _ratio(*answer_rate_fraction(counts))


def selective_accuracy(counts: SliceCounts) -> FloatArray:
    """Return C / A, null when nothing was answered."""
    _, answered, correct = counts.sums
    return _ratio(correct, answered)


def _class_sum(values: FloatArray) -> FloatArray:
    """Return the sum over the last (class) axis, added in the order numpy adds a C-contiguous row."""
    classes = values.shape[-1]
    if not 0 < classes < 8:  # numpy adds 8 values or more pairwise: keep its exact order
        return np.ascontiguousarray(values).sum(axis=-1)  # type: ignore[no-any-return]
    # fewer than 8 it adds left to right; one pass per class is much faster than reducing a short axis
    total = values[..., 0].copy()
    for c in range(1, classes):
        total += values[..., c]
    return total


def _classes_seen(den: CountArray) -> CountArray:
    """Return how many classes have a nonzero ``den`` (one pass per class, as in ``_class_sum``)."""
    seen = np.zeros(den.shape[:-1], dtype=np.int64)
    for c in range(den.shape[-1]):
        seen += den[..., c] != 0
    return seen


def macro_f1(counts: SliceCounts) -> FloatArray:
    """Return the mean per-class F1 over classes seen in gold labels or answers."""
    per_class, den = counts.per_class_f1  # 0 for a class never seen
    return _ratio(_class_sum(per_class), _classes_seen(den))


def macro_f1_fixed(counts: SliceCounts) -> FloatArray:
    """Return the mean per-class F1 over every class of the task, a class never seen counting 0; null when N is 0.

    ComparisonQA's own definition (its evaluation script calls scikit-learn's
    ``f1_score(..., labels=[A, B, C, D], average="macro")``, an abstention mapped
    outside the labels); ``macro_f1`` averages over the classes seen instead.
    """
    per_class, _ = counts.per_class_f1  # 0 for a class never seen
    return np.where(counts.sums[0] > 0, _class_sum(per_class) / per_class.shape[-1], np.nan)


def avg_macro_f1(counts: SliceCounts) -> FloatArray:
    """Return the mean of the head and the tail items' ``macro_f1_fixed`` over complete pairs (ComparisonQA's).

    ComparisonQA's "avg Macro F1": macro-F1 over the fixed classes of the head
    (high-frequency) questions and of the tail (low-frequency) questions, averaged;
    null without a complete pair.
    """
    if counts.pairs is None:
        raise ValueError("avg_macro_f1 needs a pairs table")
    sides = macro_f1_fixed(SliceCounts(cells=counts.pairs, binary=counts.binary))  # (..., 2): head, tail
    return (sides[..., 0] + sides[..., 1]) / 2


def f1(counts: SliceCounts) -> FloatArray:
    """Return the F1 of the positive class (binary) or the macro F1 (multiple choice)."""
    if not counts.binary:
        return macro_f1(counts)
    per_class, _ = counts.per_class_f1
    return np.where(counts.sums[0] > 0, per_class[..., 1], np.nan)  # class 1 is the positive class


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


def aurc(counts: SliceCounts) -> FloatArray:
    """Return the area under the risk-coverage curve (docs/LONG_TAIL.md, Risk-coverage and aurc); lower is better.

    Levels in order, each level one group: coverage = items so far / N, risk = wrong so
    far / items so far; the area is the sum over groups of (coverage step) x risk.
    """
    if counts.ranking is None:
        raise ValueError("aurc needs a ranking table")
    items, wrong = counts.ranking[..., 0], counts.ranking[..., 1]
    so_far = np.cumsum(items, axis=-1)
    # before the first item, wrong so far is 0 too: risk 0 / 1, and the items (0) times it add 0.0
    risk = np.true_divide(np.cumsum(wrong, axis=-1), np.maximum(so_far, 1))
    area = (items * risk).sum(axis=-1)
    return _ratio(area, so_far[..., -1])
