"""What a metric path measures for readers outside Tailboard: direction, range, unit, and a shared metric id.

Direction comes from the one registry (``scoring.metrics.paths``). Ranges: every
metric and pair share is a rate in [0, 1]; a ``popularity.gap.*`` (head − tail) lies in
[-1, 1]; a ``popularity.relative_drop.*`` ((head − tail) / head) is at most 1 and has no
lower bound (a tail far above a small head gives any negative value), so its minimum is
-inf. Both differences are lower-is-better. Metric ids follow Every Eval Ever's advice:
a canonical global id where the figure is one (``accuracy``, ``f1``, ``f1_macro``,
``ece``, ``aurc``), else an id namespaced ``tailboard.``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scoring.exports.model import ExportError
from scoring.metrics.paths import DIFFERENCES, resolve_path
from scoring.types import TaskType

_IDS: dict[str, tuple[str, str]] = {
    # registry name: (metric id, metric family)
    "accuracy": ("accuracy", "accuracy"),
    "answer_rate": ("tailboard.answer_rate", "coverage"),
    "selective_accuracy": ("tailboard.selective_accuracy", "accuracy"),
    "f1": ("f1", "f1"),
    "macro_f1": ("f1_macro", "f1"),
    "macro_f1_fixed": ("tailboard.macro_f1_fixed", "f1"),
    "avg_macro_f1": ("tailboard.avg_macro_f1", "f1"),
    "group_accuracy": ("tailboard.group_accuracy", "accuracy"),
    "ece": ("ece", "calibration_error"),
    "aurc": ("aurc", "risk_coverage"),
}
"""Every registered metric's export id; tests/scoring/test_exports_scales.py holds it to the registry."""

_DIFFERENCE_IDS = {"gap": "head_tail_gap", "relative_drop": "head_tail_relative_drop"}


@dataclass(frozen=True)
class MetricScale:
    """How to read one metric path: what it is, which way is better, its range and unit, and its ids."""

    path: str
    metric: str  # the registry metric (or pair share) the path ends in
    slice: str  # "overall", "popularity.tail", "popularity.gap", "breakdowns.category.science", "pairs"
    higher_is_better: bool
    min_score: float  # -inf: no lower bound
    max_score: float
    unit: str
    metric_id: str
    kind: str

    @property
    def lower_is_better(self) -> bool:
        """Return the direction as Every Eval Ever states it."""
        return not self.higher_is_better


def metric_scale(path: str, *, task_type: TaskType) -> MetricScale:
    """Return direction, range, unit and ids of a metric path; an unknown path raises UnknownMetricError."""
    resolved = resolve_path(path)
    parts = path.split(".")
    slice_name = "overall" if len(parts) == 1 else ".".join(parts[:-1])
    if parts[0] == "pairs":
        metric_id, kind = f"tailboard.pairs.{resolved.metric}", "proportion"
    else:
        metric_id, kind = _IDS[resolved.metric]
        if resolved.metric == "f1" and task_type == "multiple_choice":
            metric_id = "f1_macro"  # docs/METRICS.md: a multiple-choice phase's f1 is its macro-F1
    low, high, unit = 0.0, 1.0, "proportion"
    if parts[0] == "popularity" and parts[1] in DIFFERENCES:
        metric_id, kind = f"tailboard.{_DIFFERENCE_IDS[parts[1]]}.{resolved.metric}", "difference"
        low = -1.0 if parts[1] == "gap" else -math.inf
        unit = "proportion" if parts[1] == "gap" else "ratio"
    return MetricScale(path=path, metric=resolved.metric, slice=slice_name,
                       higher_is_better=resolved.higher_is_better, min_score=low, max_score=high,
                       unit=unit, metric_id=metric_id, kind=kind)


def check_in_range(scale: MetricScale, value: float, *, where: str) -> None:
    """Raise ExportError when a figure lies outside its metric's range (a platform bug, not a reader's)."""
    if not scale.min_score <= value <= scale.max_score:
        raise ExportError(f"{where}: {scale.path} = {value} lies outside [{scale.min_score}, {scale.max_score}]")
