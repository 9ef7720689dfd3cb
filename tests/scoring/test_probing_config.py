"""Probing config keys (docs/PROBING.md): defaults on, every bad value named, min_answered refuses thin files."""

from __future__ import annotations

from typing import Any

import pytest

import scoring
from scoring.config import load_config
from scoring.types import LabelFileError, PredictionFileError

LABELS = b"".join(f'{{"id": "q{i}", "label": {str(i % 2 == 0).lower()}}}\n'.encode() for i in range(6))


def test_probing_defaults_are_on() -> None:
    config = load_config({"task_type": "binary"})
    assert (config.min_slice_items, config.public_feedback, config.ladder_step, config.min_answered) == (
        25, "exact", None, None)


def test_probing_settings_are_read() -> None:
    config = load_config({"task_type": "binary", "min_slice_items": 5, "public_feedback": "ladder",
                          "ladder_step": 0.05, "min_answered": 3})
    assert (config.min_slice_items, config.public_feedback, config.ladder_step, config.min_answered) == (
        5, "ladder", 0.05, 3)


@pytest.mark.parametrize(("key", "value"), [
    ("min_slice_items", 0), ("min_slice_items", 2.5), ("min_slice_items", True), ("min_slice_items", None),
    ("public_feedback", "rounded"), ("ladder_step", 0), ("ladder_step", 1.5), ("ladder_step", "0.1"),
    ("min_answered", 0), ("min_answered", "10"), ("min_answered", -3),
])
def test_bad_probing_value_is_refused_naming_its_key(key: str, value: Any) -> None:
    with pytest.raises(LabelFileError, match=key):
        load_config({"task_type": "binary", key: value})


def test_file_answering_fewer_than_min_answered_is_refused() -> None:
    labels = scoring.load_labels(LABELS, {"task_type": "binary", "min_answered": 3})
    with pytest.raises(PredictionFileError) as caught:
        scoring.read_predictions(b"id,prediction\nq0,yes\nq1,\nq2,no\n", labels)
    assert caught.value.error_count == 1
    assert "at least 3 answered items" in caught.value.problems[0].message
    assert caught.value.problems[0].line is None


def test_file_answering_min_answered_items_is_accepted_in_every_format() -> None:
    labels = scoring.load_labels(LABELS, {"task_type": "binary", "min_answered": 2})
    assert scoring.read_predictions(b"id,prediction\nq0,yes\nq1,no\n", labels).n_predictions == 2
    assert scoring.read_predictions(b'{"q0": true, "q1": false}', labels).n_predictions == 2
