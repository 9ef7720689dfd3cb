"""Phase configs (docs/FORMATS.md, Phase config): defaults, every check, and inference from labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.config import infer_config, load_config
from scoring.types import LabelFileError, PhaseConfig


def test_binary_config_gets_spec_defaults() -> None:
    config = load_config({"task_type": "binary"})
    assert config == PhaseConfig(
        task_type="binary", options=("false", "true"), primary_metric="accuracy", breakdowns=("category",),
        head_min=None, tail_max=None, missing_ids="abstain",
    )


def test_full_config_is_read() -> None:
    raw = {
        "task_type": "multiple_choice", "options": ["A", "B", " C "], "primary_metric": "macro_f1",
        "breakdowns": ["category", "domain"], "popularity": {"head_min": 185, "tail_max": 107}, "missing_ids": "error",
    }
    config = load_config(raw)
    assert config.options == ("A", "B", "C")
    assert config.primary_metric == "macro_f1"
    assert config.breakdowns == ("category", "domain")
    assert (config.head_min, config.tail_max) == (185.0, 107.0)
    assert config.missing_ids == "error"


def test_reads_json_file_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / "phase.json"
    path.write_text(json.dumps({"task_type": "binary", "breakdowns": []}))
    assert load_config(path).breakdowns == ()
    assert load_config(str(path)).task_type == "binary"
    assert load_config(b'{"task_type": "binary"}').task_type == "binary"


def test_phase_config_passes_through() -> None:
    config = PhaseConfig(task_type="binary")
    assert load_config(config) is config


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "task_type is required"),
        ({"task_type": "regression"}, "task_type must be one of binary, multiple_choice"),
        ({"task_type": "binary", "options": ["yes", "no"]}, "options apply to multiple_choice only"),
        ({"task_type": "multiple_choice"}, "multiple_choice needs options"),
        ({"task_type": "multiple_choice", "options": []}, "options must be a non-empty list"),
        ({"task_type": "multiple_choice", "options": "ABCD"}, "options must be a non-empty list"),
        ({"task_type": "multiple_choice", "options": ["A", ""]}, "every option must be a non-empty string"),
        ({"task_type": "multiple_choice", "options": ["A", 2]}, "every option must be a non-empty string"),
        ({"task_type": "multiple_choice", "options": ["A", "a"]}, "options must be distinct"),
        ({"task_type": "binary", "primary_metric": "auc"}, "valid metrics: accuracy, answer_rate, selective_accuracy"),
        ({"task_type": "binary", "breakdowns": "category"}, "breakdowns must be a list"),
        ({"task_type": "binary", "breakdowns": ["category", "category"]}, "lists a field twice"),
        ({"task_type": "binary", "breakdowns": ["label"]}, "'label' cannot be a breakdown"),
        ({"task_type": "binary", "popularity": {"head_min": 185}}, "both popularity.head_min and popularity.tail_max"),
        ({"task_type": "binary", "popularity": {"head_min": "185", "tail_max": 107}}, "head_min must be a number"),
        ({"task_type": "binary", "popularity": {"head_min": True, "tail_max": 0}}, "head_min must be a number"),
        ({"task_type": "binary", "popularity": {"head_min": 100, "tail_max": 100}}, "head_min must be greater"),
        ({"task_type": "binary", "popularity": {"head": 1}}, "popularity has unknown key(s)"),
        ({"task_type": "binary", "popularity": [1, 2]}, "popularity must be an object"),
        ({"task_type": "binary", "missing_ids": "ignore"}, "missing_ids must be one of abstain, error"),
        ({"task_type": "binary", "primary": "accuracy"}, "unknown key(s) ['primary']"),
    ],
)
def test_config_errors_say_what_is_wrong(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(LabelFileError) as caught:
        load_config(raw)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"task_type": "binary", "popularity": {"head_min": NaN, "tail_max": 1}}', "not valid JSON"),
        (b"[1]", "must be a JSON object"),
        (b"\xff", "not valid JSON"),
    ],
)
def test_unreadable_config_is_a_label_file_error(source: bytes, message: str) -> None:
    with pytest.raises(LabelFileError, match=message):
        load_config(source)


def test_missing_config_file_is_a_label_file_error(tmp_path: Path) -> None:
    with pytest.raises(LabelFileError, match="cannot read the phase config"):
        load_config(tmp_path / "missing.json")


def test_without_config_task_is_inferred_from_labels() -> None:
    assert load_config(None, labels_hint=[True, "no", 1, "YES", 0.0]) == PhaseConfig(task_type="binary")
    inferred = load_config(None, labels_hint=["a", "D", "B"])
    assert inferred.task_type == "multiple_choice"
    assert inferred.options == ("A", "B", "C", "D")
    assert inferred.breakdowns == ("category",)


def test_config_without_task_type_takes_it_from_labels() -> None:
    config = load_config({"primary_metric": "macro_f1"}, labels_hint=["A", "C"])
    assert (config.task_type, config.options, config.primary_metric) == ("multiple_choice", ("A", "B", "C"), "macro_f1")


def test_multiple_choice_without_options_takes_letters_from_labels() -> None:
    assert load_config({"task_type": "multiple_choice"}, labels_hint=["B"]).options == ("A", "B")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([], "there are no labels"),
        (["A", "maybe"], "label 'maybe' is neither yes/no nor one letter"),
        (["AB"], "label 'AB' is neither"),
        ([2], "label 2 is neither"),
        (["A", True], "some labels are yes/no and others letters"),
    ],
)
def test_inference_failures_say_why(values: list[object], message: str) -> None:
    with pytest.raises(LabelFileError, match=message):
        infer_config(values)


def test_no_config_and_no_labels_is_an_error() -> None:
    with pytest.raises(LabelFileError, match="no phase config and no labels"):
        load_config(None)
