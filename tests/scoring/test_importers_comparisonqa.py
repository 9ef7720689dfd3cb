"""ComparisonQA import: two multiple-choice items per record, pairs, numeric popularity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.importers import SourceFormatError, run_import

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "importers"
EXAMPLE = (HERE.parents[2] / "shared" / "datasets" / "comparisonqa"
           / "comparisonqa_test_example.json")
needs_real = pytest.mark.skipif(not EXAMPLE.exists(), reason="../shared/datasets is not present")


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines output file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@needs_real
def test_two_records_become_four_items_in_two_pairs(tmp_path: Path) -> None:
    report = run_import("comparisonqa", EXAMPLE, tmp_path / "out")
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert labels == [
        {"id": "Character_159251-high", "label": "D", "category": "Character",
         "popularity": 193, "pair": "Character_159251"},
        {"id": "Character_159251-low", "label": "B", "category": "Character",
         "popularity": 98, "pair": "Character_159251"},
        {"id": "Part_79761-high", "label": "D", "category": "Part", "popularity": 278,
         "pair": "Part_79761"},
        {"id": "Part_79761-low", "label": "A", "category": "Part", "popularity": 38,
         "pair": "Part_79761"},
    ]
    assert (report.kept, report.changed, report.skipped) == (4, 0, 0)


@needs_real
def test_phase_config_carries_options_and_the_paper_thresholds(tmp_path: Path) -> None:
    run_import("comparisonqa", EXAMPLE, tmp_path / "out")
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    assert phase["task_type"] == "multiple_choice"
    assert phase["options"] == ["A", "B", "C", "D"]
    assert phase["popularity"] == {"head_min": 185, "tail_max": 107}


@needs_real
def test_questions_keep_text_and_options_but_not_the_answer(tmp_path: Path) -> None:
    run_import("comparisonqa", EXAMPLE, tmp_path / "out")
    question = jsonl(tmp_path / "out" / "questions.jsonl")[1]
    assert question["question"] == "What is the primary motivation or characteristic of Yan Shun?"
    assert sorted(question["options"]) == ["A", "B", "C", "D"]
    assert question["entity"] == "http://dbpedia.org/resource/Yan_Shun"
    assert "answer" not in question and "label" not in question


def test_odd_counts_bad_answers_and_repeats_are_reported(tmp_path: Path) -> None:
    report = run_import("comparisonqa", FIXTURES / "comparisonqa_small.json", tmp_path / "out")
    by_item = {(e.index, e.id): (e.action, e.reason) for e in report.entries}
    assert by_item[(1, "Part_2-high")] == (
        "kept", "high entity has 150 relationships, below head_min 185")
    assert by_item[(1, "Part_2-low")] == (
        "changed", "relationship count 'about forty' is not a number: no popularity")
    assert by_item[(2, None)] == ("skipped", "low: answer is not one of the option letters")
    assert by_item[(3, None)] == ("skipped", "duplicate question_id")
    labels = {r["id"]: r for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert "popularity" not in labels["Part_2-low"] and labels["Place_3-high"]["popularity"] == 5000


def test_an_object_is_not_a_comparisonqa_file(tmp_path: Path) -> None:
    source = tmp_path / "one.json"
    source.write_text('{"question_id": "x"}', encoding="utf-8")
    with pytest.raises(SourceFormatError, match="not the JSON array"):
        run_import("comparisonqa", source, tmp_path / "out")
