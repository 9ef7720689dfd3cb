"""TG-CSR import: majority of annotator votes, ties as yes, NaN votes, gt files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.importers import SourceFormatError, run_import

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "importers"
JSONL = HERE.parents[2] / "shared" / "datasets" / "tg-csr" / "jsonl"
needs_real = pytest.mark.skipif(not JSONL.is_dir(), reason="../shared/datasets is not present")
PAIRS = {"vacationing-abroad": 331, "camping": 340, "bad-weather": 297, "dental-cleaning": 224}
NO_VOTE_LINES = [71, 72, 73, 83, 258]  # vacationing-abroad-tf.jsonl


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines output file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@needs_real
@pytest.mark.parametrize("kind", ["tf", "mc"])
@pytest.mark.parametrize("context", list(PAIRS))
def test_every_context_file_imports_its_pairs(context: str, kind: str, tmp_path: Path) -> None:
    report = run_import("tgcsr", JSONL / f"{context}-{kind}.jsonl", tmp_path / "out")
    skipped = 5 if (context, kind) == ("vacationing-abroad", "tf") else 0
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert len(labels) == PAIRS[context] - skipped
    assert (report.kept + report.changed, report.skipped) == (PAIRS[context] - skipped, skipped)
    assert all(r["id"] == f"{r['group']}-{q['answerID']}" for r, q in
               zip(labels, jsonl(tmp_path / "out" / "questions.jsonl"), strict=True))
    assert len({r["category"] for r in labels}) == 9


@needs_real
def test_vacationing_abroad_tf_skips_the_five_rows_without_a_vote(tmp_path: Path) -> None:
    report = run_import("tgcsr", JSONL / "vacationing-abroad-tf.jsonl", tmp_path / "out")
    skipped = [e for e in report.entries if e.action == "skipped"]
    assert [e.line for e in skipped] == NO_VOTE_LINES
    assert [e.source_id for e in skipped][:3] == ["VC41-VC13", "VC41-VC24", "VC41-VC42"]
    assert all(e.reason == "no usable vote (6 missing)" for e in skipped)


@needs_real
@pytest.mark.parametrize("name", ["camping-tf", "bad-weather-mc", "vacationing-abroad-tf"])
def test_gt_files_give_the_same_labels_as_the_vote_files(name: str, tmp_path: Path) -> None:
    run_import("tgcsr", JSONL / f"{name}.jsonl", tmp_path / "votes")
    run_import("tgcsr", JSONL / f"{name}-gt.jsonl", tmp_path / "gt")
    votes = [(r["id"], r["label"]) for r in jsonl(tmp_path / "votes" / "labels.jsonl")]
    gt = [(r["id"], r["label"]) for r in jsonl(tmp_path / "gt" / "labels.jsonl")]
    assert votes == gt


def test_label_is_the_majority_of_votes_with_ties_as_yes(tmp_path: Path) -> None:
    run_import("tgcsr", FIXTURES / "tgcsr_ctx-tf.jsonl", tmp_path / "out")
    labels = {r["id"]: (r["label"], r["agreement"]) for r in
              jsonl(tmp_path / "out" / "labels.jsonl")}
    assert labels == {"VC3-VC0": (True, "unanimous"), "VC3-VC1": (True, "tie"),
                      "VC3-VC2": (False, "majority"), "VC4-VC1": (True, "tie"),
                      "VC4-VC3": (False, "majority")}


def test_nan_votes_are_missing_and_every_odd_row_is_reported(tmp_path: Path) -> None:
    report = run_import("tgcsr", FIXTURES / "tgcsr_ctx-tf.jsonl", tmp_path / "out")
    reasons = {e.line: (e.action, e.reason) for e in report.entries}
    assert reasons[3] == ("kept", "1 of 6 votes missing")
    assert reasons[4] == ("skipped", "no usable vote (6 missing)")
    assert reasons[5] == ("kept", "2 of 6 votes missing; tie in labels (2 of 4 yes) counted as yes")
    assert reasons[6] == ("skipped", "duplicate id (first on line 2)")
    assert reasons[7] == ("skipped", "vote of annotator A is 2, not 0, 1 or NaN")
    assert reasons[1] == ("kept", None)


def test_questions_carry_ids_category_and_group_but_no_votes(tmp_path: Path) -> None:
    run_import("tgcsr", FIXTURES / "tgcsr_ctx-tf-gt.jsonl", tmp_path / "out")
    questions = jsonl(tmp_path / "out" / "questions.jsonl")
    assert questions[0] == {"id": "VC3-VC0", "questionID": "VC3", "answerID": "VC0",
                            "category": "Time", "group": "VC3"}
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    assert phase["task_type"] == "binary" and phase["breakdowns"] == ["category"]


def test_gt_ties_count_as_yes_too(tmp_path: Path) -> None:
    report = run_import("tgcsr", FIXTURES / "tgcsr_ctx-tf-gt.jsonl", tmp_path / "out")
    labels = {r["id"]: r["label"] for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert labels == {"VC3-VC0": True, "VC3-VC1": True, "VC3-VC2": False}
    assert [e.reason for e in report.entries if e.line == 2] == [
        "tie in gt (3 of 6 yes) counted as yes"]


def test_a_creak_file_is_not_a_tgcsr_file(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="has no questionID, answerID"):
        run_import("tgcsr", FIXTURES / "creak_dev.json", tmp_path / "out")


@needs_real
def test_phase_ranks_by_f1_and_shows_each_categorys_f1(tmp_path: Path) -> None:
    run_import("tgcsr", JSONL / "camping-mc.jsonl", tmp_path / "out")
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    categories = sorted({r["category"] for r in jsonl(tmp_path / "out" / "labels.jsonl")})
    assert phase["primary_metric"] == "f1"
    (only,) = phase["views"]
    assert (only["name"], only["metric"]) == ("Overall", "f1")
    assert only["columns"] == ["accuracy", "group_accuracy", *(f"breakdowns.category.{c}.f1" for c in categories)]
    assert "breakdowns.category.Physical Entities.f1" in only["columns"]
