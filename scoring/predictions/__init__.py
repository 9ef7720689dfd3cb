"""Prediction files (docs/FORMATS.md): ``read_predictions`` loads, reads and validates one against a label set."""

from __future__ import annotations

from scoring.predictions.reader import read_predictions

__all__ = ["read_predictions"]
