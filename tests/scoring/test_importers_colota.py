"""CoLoTa import: duplicates, non-boolean answers, clean-ups, popular originals, linkage."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scoring.importers import ImportUsageError, SourceFormatError, run_import
from scoring.importers.colota import linkage as colota_linkage

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "importers"
COLOTA = HERE.parents[2] / "shared" / "datasets" / "colota"
DATA = COLOTA / "baselines" / "data"
needs_real = pytest.mark.skipif(not COLOTA.is_dir(), reason="../shared/datasets is not present")
CV_EXCEPTIONS = {32, 34, 43, 59, 71, 76, 146}  # texts changed after CV-modified.csv


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines output file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@needs_real
def test_qa_skips_the_second_s200_and_s39(tmp_path: Path) -> None:
    report = run_import("colota", COLOTA / "CoLoTa_qa.json", tmp_path / "out")
    skipped = {(e.index, e.source_id): e.reason for e in report.entries if e.action == "skipped"}
    assert skipped == {(200, "S200"): "duplicate id (first at index 199)",
                       (38, "S39"): "answer not a boolean"}
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert len(labels) == 1689 and {r["popularity"] for r in labels} == {"tail"}
    assert (report.kept, report.changed, report.skipped) == (1595, 94, 2)


@needs_real
def test_qa_entity_names_lose_their_leading_comma(tmp_path: Path) -> None:
    report = run_import("colota", COLOTA / "CoLoTa_qa.json", tmp_path / "out")
    questions = jsonl(tmp_path / "out" / "questions.jsonl")
    names = [name for q in questions for name in q.get("kg_entities", {})]
    assert not [n for n in names if n.lstrip().startswith(",")]
    fixed = [e for e in report.entries if e.reason and "entity name" in e.reason]
    assert len(fixed) == 92  # the 93rd is on the skipped second S200
    assert all(e.action == "changed" for e in fixed)


@needs_real
def test_educational_is_reported_and_merged_into_education(tmp_path: Path) -> None:
    report = run_import("colota", COLOTA / "CoLoTa_qa.json", tmp_path / "out")
    labels = {r["id"]: r for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    categories = Counter(c for r in labels.values() for c in r["category"])
    assert categories["education"] == 4 and "educational" not in categories
    assert labels["S172"]["category"] == ["education", "definition", "biological"]
    changed = {e.source_id for e in report.entries if e.reason and "'educational'" in e.reason}
    assert changed == {"S172", "S182"}


@needs_real
def test_cv_skips_the_second_c150(tmp_path: Path) -> None:
    report = run_import("colota", COLOTA / "CoLoTa_cv.json", tmp_path / "out")
    assert [(e.index, e.reason) for e in report.entries if e.action == "skipped"] == [
        (150, "duplicate id (first at index 149)")]
    assert len(jsonl(tmp_path / "out" / "labels.jsonl")) == 1649


@needs_real
def test_qa_originals_add_149_head_items_and_no_linkage(tmp_path: Path) -> None:
    report = run_import("colota", COLOTA / "CoLoTa_qa.json", tmp_path / "out",
                        originals=DATA / "QA-original.csv", modified=DATA / "QA-modified.csv")
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    head = [r for r in labels if r["popularity"] == "head"]
    assert len(head) == 149 and all(r["id"] == "orig-" + r["original"] for r in head)
    assert not [r for r in labels if r["popularity"] == "tail" and "original" in r]
    s81 = [e for e in report.entries if e.file == "QA-original.csv" and e.action == "skipped"]
    assert [(e.source_id, e.line, e.reason) for e in s81] == [("S81", 82, "blank answer")]
    assert any("records not linked" in note for note in report.notes)


@needs_real
def test_cv_records_link_to_original_by_position_except_seven_noted(tmp_path: Path) -> None:
    report = run_import("colota", COLOTA / "CoLoTa_cv.json", tmp_path / "out",
                        originals=DATA / "CV-original.csv", modified=DATA / "CV-modified.csv")
    labels = {r["id"]: r for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert sum(r["popularity"] == "head" for r in labels.values()) == 150
    tail = [e for e in report.entries if e.file is None and e.action != "skipped"]
    assert len(tail) == 1649
    for e in tail:
        assert e.id is not None and e.index is not None
        assert labels[e.id]["original"] == f"C{e.index % 150 + 1}"
    noted = {e.index for e in tail if e.reason}
    assert noted == CV_EXCEPTIONS
    assert any("1642 by exact text" in note and "7 by closest text" in note
               for note in report.notes)


def test_answer_revealing_fields_stay_out_of_questions(tmp_path: Path) -> None:
    run_import("colota", FIXTURES / "colota_qa.json", tmp_path / "out")
    question = jsonl(tmp_path / "out" / "questions.jsonl")[0]
    assert question == {
        "id": "S1", "query": "Is the population in Horsens going to reach 60000 before Ikast?",
        "kg_entities": {"Horsens": "Q190235", "Ikast": "Q1021277"},
        "category": ["number comparison"], "popularity": "tail"}


def test_fixture_quirks_are_each_reported(tmp_path: Path) -> None:
    report = run_import("colota", FIXTURES / "colota_qa.json", tmp_path / "out")
    by_index = {e.index: (e.action, e.reason) for e in report.entries}
    assert by_index[3] == ("skipped", "duplicate id (first at index 2)")
    assert by_index[4] == ("skipped", "answer not a boolean")
    assert by_index[5] == (
        "changed", "entity name ',Jan be Rang-e-Narenj' -> 'Jan be Rang-e-Narenj'")
    labels = {r["id"]: r for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert labels["S3"]["category"] == ["professions and occupations", "education"]
    assert labels["S3"]["label"] is True and labels["S6"]["popularity"] == "tail"


def test_originals_get_prefixed_ids_and_bad_answers_are_skipped(tmp_path: Path) -> None:
    report = run_import("colota", FIXTURES / "colota_qa.json", tmp_path / "out",
                        originals=FIXTURES / "colota_qa_original.csv")
    labels = {r["id"]: r for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert labels["orig-S1"] == {"id": "orig-S1", "label": False, "popularity": "head",
                                 "original": "S1"}
    assert labels["orig-S5"]["label"] is True  # "true" in lower case
    skipped = {e.source_id: e.reason for e in report.entries
               if e.file == "colota_qa_original.csv" and e.action == "skipped"}
    assert skipped == {"S3": "blank answer", "S4": "answer is not TRUE/FALSE"}
    questions = {q["id"]: q for q in jsonl(tmp_path / "out" / "questions.jsonl")}
    assert questions["orig-S2"]["query"].startswith("Was animal in You're a Good Sport")


def test_too_few_exact_matches_leave_records_unlinked(tmp_path: Path) -> None:
    report = run_import("colota", FIXTURES / "colota_cv.json", tmp_path / "out",
                        originals=FIXTURES / "colota_cv_original.csv",
                        modified=FIXTURES / "colota_cv_modified.csv")
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert not [r for r in labels if r["popularity"] == "tail" and "original" in r]
    assert any("for only 6 of 8 records" in note for note in report.notes)


def test_closest_text_links_or_refuses_when_the_rule_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(colota_linkage, "EXACT_SHARE", 0.5)
    report = run_import("colota", FIXTURES / "colota_cv.json", tmp_path / "out",
                        originals=FIXTURES / "colota_cv_original.csv",
                        modified=FIXTURES / "colota_cv_modified.csv")
    original = {r["id"]: r.get("original") for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert original == {"C1": "C1", "C2": "C2", "C3": "C3", "C4": "C2", "C5": "C3",
                        "C6": "C1", "C7": None, "C8": "C3",
                        "orig-C1": "C1", "orig-C2": "C2", "orig-C3": "C3"}
    reasons = {e.id: e.reason or "" for e in report.entries}
    assert "original C2 by position" in reasons["C4"]
    assert "not linked" in reasons["C7"] and "C3's group" in reasons["C7"]


def test_originals_of_the_other_task_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="other task"):
        run_import("colota", FIXTURES / "colota_qa.json", tmp_path / "out",
                   originals=FIXTURES / "colota_cv_original.csv")
    assert not (tmp_path / "out").exists()


def test_modified_without_originals_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ImportUsageError, match="--modified needs --originals"):
        run_import("colota", FIXTURES / "colota_cv.json", tmp_path / "out",
                   modified=FIXTURES / "colota_cv_modified.csv")


def test_json_lines_are_not_a_colota_file(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="one JSON array"):
        run_import("colota", FIXTURES / "creak_dev.json", tmp_path / "out")


def test_a_csv_without_id_and_answer_is_not_an_originals_file(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="not a CoLoTa originals CSV"):
        run_import("colota", FIXTURES / "colota_qa.json", tmp_path / "out",
                   originals=FIXTURES / "creak_dev.json")


@needs_real
@pytest.mark.parametrize("task", ["qa", "cv"])
def test_with_originals_the_phase_ranks_by_tail_accuracy_with_head_and_tail_answer_rates(
        task: str, tmp_path: Path) -> None:
    run_import("colota", COLOTA / f"CoLoTa_{task}.json", tmp_path / "out",
               originals=DATA / f"{task.upper()}-original.csv")
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    assert phase["primary_metric"] == "popularity.tail.accuracy"
    assert [(v["name"], v["metric"]) for v in phase["views"]] == [
        ("Long tail", "popularity.tail.accuracy"), ("Overall", "accuracy")]
    assert {"popularity.head.answer_rate", "popularity.tail.answer_rate"} <= set(phase["views"][0]["columns"])


def test_without_originals_there_is_no_head_column(tmp_path: Path) -> None:
    run_import("colota", FIXTURES / "colota_qa.json", tmp_path / "out")
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    assert [v["name"] for v in phase["views"]] == ["Long tail"]
    assert not any("head" in c for v in phase["views"] for c in v["columns"])
