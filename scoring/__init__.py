"""Tailboard's scoring library: read prediction files, validate them, compute metrics.

Pure Python over numpy and pyarrow; it never imports the web stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoring.config import load_config
from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.metrics import METRICS
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
    "LabelFileError",
    "LabelSet",
    "PhaseConfig",
    "PredictionFileError",
    "Predictions",
    "Problem",
    "ScoringError",
    "evaluate",
    "load_config",
    "load_labels",
    "read_predictions",
]


def __getattr__(name: str) -> Any:
    """Import ``read_predictions`` on first use, so the rest works without it."""
    if name == "read_predictions":
        from scoring.predictions import read_predictions

        return read_predictions
    raise AttributeError(f"module 'scoring' has no attribute {name!r}")
