"""Rules of reading JSON and JSON Lines prediction files, and of confidence values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pred_support import (
    BINARY_HELP,
    NOT_AN_OBJECT,
    answers,
    make_labels,
    problems,
    read,
)

from scoring.predictions import read_predictions
from scoring.types import ABSTAIN

# --- confidence --------------------------------------------------------------------


def test_confidence_is_read_and_nan_where_it_does_not_apply() -> None:
    result = read("id,prediction,confidence\nq1,true,0.9\nq2,idk,\nq3,no,0\nq4,yes,1\n")
    assert result.confidence is not None
    assert result.confidence.dtype == np.float64
    np.testing.assert_array_equal(result.confidence, [0.9, np.nan, 0.0, 1.0])


def test_confidence_is_ignored_on_abstentions_whatever_it_holds() -> None:
    result = read("id,prediction,confidence\nq1,unknown,very high\nq2,true,.5\n")
    np.testing.assert_array_equal(result.confidence, [np.nan, 0.5, np.nan, np.nan])


def test_confidence_column_makes_it_required_on_answered_rows() -> None:
    missing = ("Missing confidence: the file gives confidences, so every answered prediction "
               "needs one (a number between 0 and 1).")
    assert problems("id,prediction,confidence\nq1,true,\nq2,false, \n") == (
        [(2, "q1", missing), (3, "q2", missing)], 2
    )


@pytest.mark.parametrize("text", ["high", "nan", "inf", "1_0", "0,5", "--1", "0x1"])
def test_confidence_must_be_a_number(text: str) -> None:
    assert problems(f'id,prediction,confidence\nq1,true,"{text}"\n') == (
        [(2, "q1", f"Invalid confidence '{text}': it must be a number between 0 and 1.")], 1
    )


@pytest.mark.parametrize("text", ["1.5", "-0.1", "2", "1e400", "1.0000001"])
def test_confidence_must_be_between_zero_and_one(text: str) -> None:
    assert problems(f"id,prediction,confidence\nq1,true,{text}\n") == (
        [(2, "q1", f"Confidence '{text}' is out of range: it must be between 0 and 1.")], 1
    )


@pytest.mark.parametrize("text", ["0", "1", "0.0", "1.000", ".5", "5e-1", "+0.25", " 0.3 "])
def test_confidence_accepts_plain_numbers_in_range(text: str) -> None:
    result = read(f'id,prediction,confidence\nq1,true,"{text}"\n')
    assert result.confidence is not None and result.confidence[0] == float(text)


def test_json_confidence_may_be_a_number_or_a_numeric_string() -> None:
    data = json.dumps([{"id": "q1", "prediction": True, "confidence": 0.75},
                       {"id": "q2", "prediction": False, "confidence": "0.5"}])
    np.testing.assert_array_equal(read(data).confidence, [0.75, 0.5, np.nan, np.nan])


def test_json_confidence_key_in_any_record_makes_it_required_on_every_answered_one() -> None:
    data = "\n".join(json.dumps(r) for r in [
        {"id": "q1", "prediction": True},
        {"id": "q2", "prediction": None},
        {"id": "q3", "prediction": "no", "confidence": 0.5},
        {"id": "q4", "prediction": "no", "confidence": True},
    ])
    found, count = problems(data)
    assert count == 2
    assert found[0][:2] == (1, "q1") and found[0][2].startswith("Missing confidence")
    assert found[1] == (4, "q4", "Invalid confidence 'true': it must be a number between 0 and 1.")


def test_without_confidence_column_confidence_is_none() -> None:
    assert read(json.dumps({"q1": "yes"})).confidence is None
    assert read('{"id": "q1", "prediction": "yes"}\n').confidence is None


# --- JSON Lines --------------------------------------------------------------------


def test_jsonl_records_and_blank_lines() -> None:
    data = b'{"id": "q1", "prediction": "yes"}\r\n\r\n  \n{"id": "q2", "prediction": false}\r\n'
    assert answers(data) == [1, 0, ABSTAIN, ABSTAIN]


def test_jsonl_problems_are_reported_on_their_line() -> None:
    lines = [
        '{"id": "q1", "prediction": true}',
        '{"id": "q2", "prediction": true',
        '["q3", true]',
        "",
        '{"prediction": true}',
        '{"id": true, "prediction": true}',
        '{"id": "q4"}',
    ]
    data = "\n".join(lines)
    found, count = problems(data)
    assert count == 5
    assert found == [
        (2, None, "Broken JSON line: Expecting ',' delimiter at column 32."),
        (3, None, NOT_AN_OBJECT),
        (5, None, "Missing field 'id': every prediction needs an id."),
        (6, None, "Invalid id: an id must be a string or a number."),
        (7, "q4", "Missing field 'prediction'."),
    ]


def test_file_named_json_holding_json_lines_is_read_as_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    path.write_text('{"id": "q1", "prediction": "true"}\n{"id": "q2", "prediction": "false"}\n')
    assert read_predictions(path, make_labels()).answer.tolist() == [1, 0, ABSTAIN, ABSTAIN]


# --- JSON --------------------------------------------------------------------------


def test_json_list_entries_are_numbered_by_the_line_they_start_on() -> None:
    data = '[\n  {"id": "q1",\n   "prediction": "maybe"},\n  {\n    "id": "zz",\n    "prediction": true\n  }, 7\n]'
    found, _ = problems(data)
    assert [(line, id_) for line, id_, _ in found] == [(2, "q1"), (4, "zz"), (7, None)]
    assert found[2][2].startswith("Each entry of the list must be an object")


def test_json_mapping_of_ids_to_predictions() -> None:
    assert answers('{"q1": true, "q2": "no", "q4": null}') == [1, 0, ABSTAIN, ABSTAIN]


def test_json_mapping_problems_are_on_the_line_of_the_key() -> None:
    data = '{\n  "q1": true,\n  "q9": true,\n  "q2": "maybe",\n  "q1": false\n}'
    found, _ = problems(data)
    assert [(line, id_) for line, id_, _ in found] == [(3, "q9"), (4, "q2"), (5, "q1")]
    assert found[2][2] == "Duplicate id 'q1': it already appeared on line 2."


def test_single_object_with_id_and_prediction_is_one_record() -> None:
    result = read('{"id": "q2", "prediction": "yes", "confidence": 0.5}')
    assert result.answer.tolist() == [ABSTAIN, 1, ABSTAIN, ABSTAIN]
    assert result.n_predictions == 1
    np.testing.assert_array_equal(result.confidence, [np.nan, 0.5, np.nan, np.nan])


def test_single_object_special_case_wins_over_ids_named_id_and_prediction() -> None:
    labels = make_labels(["id", "prediction"])
    found, _ = problems('{"id": "yes", "prediction": "no"}', labels)
    assert found == [(1, "yes", "Unknown id 'yes': it is not an item of this phase.")]
    found, _ = problems('{"id": "yes", "prediction": ["no"]}', labels)  # not scalar: a mapping
    assert found == [(1, "prediction", f"Invalid prediction '[\"no\"]': {BINARY_HELP}")]


def test_invalid_json_is_reported_where_it_breaks() -> None:
    data = '[\n {"id": "q1", "prediction": true},\n {"id": "q2" "prediction": false}\n]'
    assert problems(data) == (
        [(3, None, "The file is not valid JSON: Expecting ',' delimiter at line 3, column 14.")], 1
    )


@pytest.mark.parametrize("data", ['[{"id": "q1", "prediction": true}] x', '{"q1": true}}', "[1,]"])
def test_trailing_or_broken_json_is_invalid(data: str) -> None:
    found, count = problems(data)
    assert count == 1 and found[0][2].startswith("The file is not valid JSON")


def test_json_scalar_document_is_refused() -> None:
    message = ("A JSON prediction file must hold a list of objects or one object mapping ids "
               "to predictions.")
    assert problems("42") == ([(None, None, message)], 1)


@pytest.mark.parametrize("data", ["[]", "{}", " [ ]\n", "\n{\n}\n"])
def test_empty_json_is_empty(data: str) -> None:
    assert problems(data) == ([(None, None, "The file is empty: it holds no predictions.")], 1)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ("[" * 100_000 + "]" * 100_000, None),
        ('{"q1": ' + "[" * 100_000 + "]" * 100_000 + "}", None),
        ('{"id": "q1", "prediction": true}\n{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n", 2),
    ],
    ids=["json", "mapping", "jsonl"],
)
def test_deeply_nested_json_is_a_problem_not_a_crash(data: str, line: int | None) -> None:
    found, count = problems(data)
    assert count == 1 and found[0][0] == line
    assert "nested too deeply" in found[0][2]
