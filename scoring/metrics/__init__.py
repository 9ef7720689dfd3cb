"""Metrics: the registry (names, labels, directions, intervals), metric paths and the count tables.

Counting a submission's slices (``scoring.metrics.slices``), scoring them in one batch
(``scoring.metrics.batch``) with bootstrap intervals (``scoring.metrics.bootstrap``)
and the long-tail curves (``scoring.metrics.curves``) are imported from their modules;
this package itself only loads the registry, so the phase config can check names
without loading the rest.
"""

from __future__ import annotations

from scoring.metrics.counts import CALIBRATION_BINS, SliceCounts, totals
from scoring.metrics.paths import MetricPath, higher_is_better, resolve_path, valid_paths_text
from scoring.metrics.registry import (
    COUNT_LABELS,
    METRICS,
    PAIR_SHARES,
    Metric,
    UnknownMetricError,
    get_metric,
    metric_label,
    point_values,
)

__all__ = [
    "CALIBRATION_BINS",
    "COUNT_LABELS",
    "METRICS",
    "PAIR_SHARES",
    "Metric",
    "MetricPath",
    "SliceCounts",
    "UnknownMetricError",
    "get_metric",
    "higher_is_better",
    "metric_label",
    "point_values",
    "resolve_path",
    "totals",
    "valid_paths_text",
]
