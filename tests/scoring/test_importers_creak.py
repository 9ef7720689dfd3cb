"""CREAK import: dev and contrast labels, contrast groups, the test file, public train data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoring.evaluate import evaluate
from scoring.importers import SourceFormatError, run_import
from scoring.labels import load_labels
from scoring.types import Predictions

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "importers"
CREAK = HERE.parents[2] / "shared" / "datasets" / "creak"
needs_real = pytest.mark.skipif(not CREAK.is_dir(), reason="../shared/datasets is not present")


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines output file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@needs_real
def test_dev_imports_1371_claims_691_true_680_false(tmp_path: Path) -> None:
    report = run_import("creak", CREAK / "dev.json", tmp_path / "out")
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert (report.kept, report.changed, report.skipped) == (1371, 0, 0)
    assert Counter(r["label"] for r in labels) == {True: 691, False: 680}
    assert labels[0] == {"id": "dev_0", "label": False}
    question = jsonl(tmp_path / "out" / "questions.jsonl")[0]
    assert question == {"id": "dev_0", "sentence": "Eating soup means eating only solids.",
                        "entity": "Soup", "en_wiki_pageid": "19651298",
                        "entity_mention_loc": [[7, 11]]}
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    assert phase["task_type"] == "binary" and phase["breakdowns"] == []


@needs_real
def test_contrast_pair_id_becomes_group_and_odd_pairs_are_noted(tmp_path: Path) -> None:
    report = run_import("creak", CREAK / "contrast_set.json", tmp_path / "out")
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert len(labels) == 500 and Counter(r["label"] for r in labels) == {True: 250, False: 250}
    sizes = Counter(r["group"] for r in labels if "group" in r)
    assert set(sizes.values()) == {2} and len(sizes) == 248  # p_74 (3 claims) and p_18 (1) are no pairs
    ungrouped = {r["id"] for r in labels if "group" not in r}
    assert len(ungrouped) == 4 and "c_331" in ungrouped and "c_467" in ungrouped
    noted = {e.id: e.reason for e in report.entries if e.reason}
    assert {"c_135", "c_237", "c_331", "c_467"} <= set(noted)
    assert "p_74 has 3 claim(s)" in noted["c_331"] and "p_18 has 1 claim(s)" in noted["c_467"]
    assert "not a pair" in noted["c_467"]
    assert {e.id for e in report.entries if e.action == "changed"} == ungrouped
    assert "same sentence as c_135" in noted["c_237"]
    assert report.skipped == 0


@needs_real
def test_contrast_set_phase_shows_contrast_consistency_over_two_claim_pairs_only(tmp_path: Path) -> None:
    """group_accuracy is the share of the 248 two-claim pairs with both claims right."""
    run_import("creak", CREAK / "contrast_set.json", tmp_path / "out")
    phase = json.loads((tmp_path / "out" / "phase.json").read_text())
    assert [(v["name"], v["metric"]) for v in phase["views"]] == [
        ("Overall", "accuracy"), ("Contrast consistency", "group_accuracy")]
    labels = load_labels(tmp_path / "out" / "labels.jsonl", tmp_path / "out" / "phase.json")
    records = jsonl(tmp_path / "out" / "labels.jsonl")
    answers = {r["id"]: r["label"] if r["id"] < "c_2" else not r["label"] for r in records}
    ids = labels.ids.to_pylist()
    result = evaluate(labels, Predictions(answer=np.array([int(answers[i]) for i in ids], dtype=np.int8),
                                          confidence=None, n_predictions=len(ids)))
    pairs: dict[str, list[bool]] = {}
    for r in records:
        if "group" in r:
            pairs.setdefault(r["group"], []).append(answers[r["id"]] == r["label"])
    assert len(pairs) == 248
    assert result["overall"]["group_accuracy"] == sum(all(v) for v in pairs.values()) / 248


@needs_real
def test_test_file_without_labels_writes_questions_only(tmp_path: Path) -> None:
    report = run_import("creak", CREAK / "test_without_labels.json", tmp_path / "out")
    assert not (tmp_path / "out" / "labels.jsonl").exists()
    assert len(jsonl(tmp_path / "out" / "questions.jsonl")) == 1371
    assert (tmp_path / "out" / "phase.json").exists()
    assert all(e.reason and e.reason.startswith("no label") for e in report.entries)
    assert any("no labels.jsonl" in note for note in report.notes)


@needs_real
def test_train_is_written_as_a_public_download_with_explanations(tmp_path: Path) -> None:
    report = run_import("creak", CREAK / "train.json", tmp_path / "out")
    train = jsonl(tmp_path / "out" / "train.jsonl")
    assert len(train) == 10176 and Counter(r["label"] for r in train) == {True: 5088, False: 5088}
    assert all(r["explanation"] for r in train)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.jsonl", "train.jsonl"]
    assert sum(1 for e in report.entries if e.reason and "same sentence" in e.reason) == 3


def test_repeated_ex_id_is_skipped_and_bad_label_reported(tmp_path: Path) -> None:
    report = run_import("creak", FIXTURES / "creak_dev.json", tmp_path / "out")
    skipped = {e.line: e.reason for e in report.entries if e.action == "skipped"}
    assert skipped == {5: "duplicate id (first on line 2)", 6: "label is not true/false"}
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert labels == [{"id": "dev_0", "label": False}, {"id": "dev_1", "label": True},
                      {"id": "dev_2", "label": True}, {"id": "dev_4", "label": True}]


def test_duplicate_sentences_are_distinct_items_with_a_note(tmp_path: Path) -> None:
    report = run_import("creak", FIXTURES / "creak_dev.json", tmp_path / "out")
    by_id = {e.id: e for e in report.entries if e.id}
    assert by_id["dev_2"].action == "kept"
    assert by_id["dev_2"].reason == "same sentence as dev_1 (kept: ids differ)"


def test_explanations_stay_out_of_public_questions(tmp_path: Path) -> None:
    run_import("creak", FIXTURES / "creak_contrast.json", tmp_path / "out")
    questions = jsonl(tmp_path / "out" / "questions.jsonl")
    assert all("explanation" not in q and "label" not in q for q in questions)
    assert [q.get("group") for q in questions][:2] == ["p_1", "p_1"]
    assert {q["id"] for q in questions if "group" not in q} == {
        r["id"] for r in jsonl(tmp_path / "out" / "labels.jsonl") if "group" not in r}


def test_contrast_pair_with_equal_labels_is_noted(tmp_path: Path) -> None:
    report = run_import("creak", FIXTURES / "creak_contrast.json", tmp_path / "out")
    reasons = {e.id: e.reason or "" for e in report.entries}
    assert "p_27 has two claims with the same label" in reasons["c_6"]
    assert reasons["c_0"] == ""


def test_a_json_array_is_not_a_creak_file(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="JSON array"):
        run_import("creak", FIXTURES / "colota_qa.json", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_json_lines_without_ex_id_are_not_a_creak_file(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="line 1 has no ex_id"):
        run_import("creak", FIXTURES / "tgcsr_ctx-tf.jsonl", tmp_path / "out")
