"""Helpers of the prediction-reader tests: label sets and reading into plain values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from scoring.labels import LabelSet
from scoring.predictions import read_predictions
from scoring.types import BINARY_OPTIONS, PhaseConfig, PredictionFileError, Predictions

IDS = ["q1", "q2", "q3", "q4"]
ABSTAIN_WORDS = ["", "unknown", "idk", "abstain", "none", "n/a", "i don't know"]
BINARY_HELP = (
    "expected one of true/false, yes/no, t/f, y/n, 1/0, or an abstention "
    "(empty, unknown, idk, abstain, none, n/a, i don't know)."
)
HEADER_HINT = "the header must be id,prediction or id,prediction,confidence"
NOT_AN_OBJECT = ('Broken JSON line: each line must be one JSON object such as '
                 '{"id": "q1", "prediction": "true"}.')
Found = list[tuple[Any, Any, str]]


def make_labels(
    ids: Sequence[str] = IDS,
    *,
    options: Sequence[str] | None = None,
    missing: str = "abstain",
    gold: Sequence[int] | None = None,
) -> LabelSet:
    """Return a label set over ids: binary, or multiple choice when options are given."""
    task = "binary" if options is None else "multiple_choice"
    config = PhaseConfig(
        task,  # type: ignore[arg-type]
        options=BINARY_OPTIONS if options is None else tuple(options),
        missing_ids=missing,  # type: ignore[arg-type]
    )
    gold_codes = np.zeros(len(ids), np.int8) if gold is None else np.array(gold, np.int8)
    return LabelSet(config, pa.array(list(ids), pa.string()), gold_codes)


def read(data: bytes | str, labels: LabelSet | None = None, **kwargs: Any) -> Predictions:
    """Read predictions from bytes (or text) for the label set."""
    raw = data.encode() if isinstance(data, str) else data
    return read_predictions(raw, labels or make_labels(), **kwargs)


def problems(data: bytes | str, labels: LabelSet | None = None, **kwargs: Any) -> tuple[Found, int]:
    """Return the listed problems as (line, id, message) and the total count."""
    with pytest.raises(PredictionFileError) as info:
        read(data, labels, **kwargs)
    listed = [(p.line, p.id, p.message) for p in info.value.problems]
    return listed, info.value.error_count


def answers(data: bytes | str, labels: LabelSet | None = None) -> list[int]:
    """Return the answer codes read from a valid file."""
    return read(data, labels).answer.tolist()


