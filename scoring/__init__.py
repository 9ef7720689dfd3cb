"""Tailboard's scoring library: read prediction files, validate them, compute metrics.

The pipeline, one package a step: ``scoring.labels`` (read and check a hidden label
file), ``scoring.predictions`` (read and validate a participant's file against it),
``scoring.metrics`` (the metric registry, slice counts, intervals, curves), then
``scoring.evaluate`` builds the result object. ``scoring.importers`` turns a
benchmark's released files into phase files; ``scoring.bundles`` reads a CodaLab or
Codabench competition bundle into a plan of phases, through ``scoring.zips``, the safe
zip reader. Pure Python over numpy and pyarrow; it never imports the web stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoring.bounded import FileTooLarge, read_bounded
from scoring.config import load_config
from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.metrics import METRICS, UnknownMetricError, get_metric, higher_is_better, metric_label
from scoring.types import (
    ABSTAIN,
    LabelFileError,
    PhaseConfig,
    PredictionFileError,
    Predictions,
    Problem,
    ScoringError,
)

if TYPE_CHECKING:
    from scoring.predictions import read_predictions

__all__ = [
    "ABSTAIN",
    "METRICS",
    "FileTooLarge",
    "LabelFileError",
    "LabelSet",
    "PhaseConfig",
    "PredictionFileError",
    "Predictions",
    "Problem",
    "ScoringError",
    "UnknownMetricError",
    "evaluate",
    "get_metric",
    "higher_is_better",
    "load_config",
    "load_labels",
    "metric_label",
    "read_bounded",
    "read_predictions",
]


def __getattr__(name: str) -> Any:
    """Import ``read_predictions`` on first use, so the rest works without it."""
    if name == "read_predictions":
        from scoring.predictions import read_predictions

        return read_predictions
    raise AttributeError(f"module 'scoring' has no attribute {name!r}")
