"""ComparisonQA import: two multiple-choice items per record, pairs, numeric popularity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.importers import SourceFormatError, run_import
from scoring.labels import load_labels
from scoring.types import HEAD, TAIL, TORSO

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
    assert phase["popularity"] == {"head_min": 186, "tail_max": 106}  # "above 185", "below 107", integers
    assert phase["views"] == [{"name": "Overall", "metric": "accuracy", "columns": [
        "popularity.head.accuracy", "popularity.tail.accuracy", "popularity.gap.accuracy",
        "pairs.both_correct", "pairs.head_only", "pairs.tail_only", "pairs.neither",
        "avg_macro_f1", "popularity.head.macro_f1_fixed", "popularity.tail.macro_f1_fixed"]}]


def test_without_a_complete_pair_the_view_has_no_avg_macro_f1(tmp_path: Path) -> None:
    records = json.loads((FIXTURES / "comparisonqa_small.json").read_text("utf-8"))
    odd = {**records[1], "low_relationshipCount": "50"}  # high 150: torso, so the pair is not complete
    source = tmp_path / "odd.json"
    source.write_text(json.dumps([odd]), encoding="utf-8")
    run_import("comparisonqa", source, tmp_path / "out")
    columns = json.loads((tmp_path / "out" / "phase.json").read_text())["views"][0]["columns"]
    assert "avg_macro_f1" not in columns and "popularity.head.macro_f1_fixed" not in columns
    assert columns[0] == "popularity.tail.accuracy" and columns[-1] == "popularity.tail.macro_f1_fixed"


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
        "kept", "high entity has 150 relationships, below head_min 186")
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


def test_the_corrected_thresholds_put_185_and_107_in_the_torso(tmp_path: Path) -> None:
    """The paper's "above 185" and "below 107": 186 is head, 185 and 107 are neither, 106 is tail."""
    def record(qid: str, high: int, low: int) -> dict[str, Any]:
        side = {"question": "Which?", "options": {"A": "x", "B": "y"}, "answer": {"A": "x"}}
        return {"question_id": qid, "hypernym": "Thing", "high_relationshipCount": str(high),
                "low_relationshipCount": str(low), "high_question": side, "low_question": side}
    source = tmp_path / "cqa.json"
    source.write_text(json.dumps([record("a", 186, 106), record("b", 185, 107)]), encoding="utf-8")
    report = run_import("comparisonqa", source, tmp_path / "out")
    labels = load_labels(tmp_path / "out" / "labels.jsonl", tmp_path / "out" / "phase.json")
    buckets = dict(zip(labels.ids.to_pylist(), labels.popularity.tolist(), strict=True))
    assert (buckets["a-high"], buckets["a-low"]) == (HEAD, TAIL)
    assert (buckets["b-high"], buckets["b-low"]) == (TORSO, TORSO)
    notes = {e.id: e.reason for e in report.entries}
    assert notes["b-high"] == "high entity has 185 relationships, below head_min 186"
    assert notes["b-low"] == "low entity has 107 relationships, above tail_max 106"
