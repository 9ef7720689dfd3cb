"""Rules every import keeps, checked on every real released file and every fixture.

The label file follows docs/FORMATS.md, the public questions never carry a label or an
answer-revealing field, every source record appears in the report, and what the
report calls kept or changed is exactly what was written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.importers import ImportReport, run_import
from scoring.importers.common import question_fields
from scoring.labels import load_labels
from scoring.producible import check_paths
from scoring.public_fields import ALWAYS_PUBLIC
from scoring.views import check_views, config_paths, views_of

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "importers"
REAL = HERE.parents[2] / "shared" / "datasets"
COLOTA_DATA = REAL / "colota" / "baselines" / "data"
TGCSR = [f"{context}-{kind}" for context in
         ("vacationing-abroad", "camping", "bad-weather", "dental-cleaning")
         for kind in ("tf", "mc", "tf-gt", "mc-gt")]

REAL_CASES: dict[str, tuple[str, Path, dict[str, Path]]] = {
    "creak-dev": ("creak", REAL / "creak" / "dev.json", {}),
    "creak-contrast": ("creak", REAL / "creak" / "contrast_set.json", {}),
    "creak-test": ("creak", REAL / "creak" / "test_without_labels.json", {}),
    "creak-train": ("creak", REAL / "creak" / "train.json", {}),
    "colota-qa": ("colota", REAL / "colota" / "CoLoTa_qa.json", {}),
    "colota-cv": ("colota", REAL / "colota" / "CoLoTa_cv.json", {}),
    "colota-qa-originals": ("colota", REAL / "colota" / "CoLoTa_qa.json", {
        "originals": COLOTA_DATA / "QA-original.csv", "modified": COLOTA_DATA / "QA-modified.csv"}),
    "colota-cv-originals": ("colota", REAL / "colota" / "CoLoTa_cv.json", {
        "originals": COLOTA_DATA / "CV-original.csv", "modified": COLOTA_DATA / "CV-modified.csv"}),
    **{f"tgcsr-{name}": ("tgcsr", REAL / "tg-csr" / "jsonl" / f"{name}.jsonl", {})
       for name in TGCSR},
    "comparisonqa": ("comparisonqa", REAL / "comparisonqa" / "comparisonqa_test_example.json", {}),
}
FIXTURE_CASES: dict[str, tuple[str, Path, dict[str, Path]]] = {
    "fx-creak-dev": ("creak", FIXTURES / "creak_dev.json", {}),
    "fx-creak-contrast": ("creak", FIXTURES / "creak_contrast.json", {}),
    "fx-creak-test": ("creak", FIXTURES / "creak_test.json", {}),
    "fx-creak-train": ("creak", FIXTURES / "creak_train.json", {}),
    "fx-colota-qa": ("colota", FIXTURES / "colota_qa.json", {
        "originals": FIXTURES / "colota_qa_original.csv"}),
    "fx-colota-cv": ("colota", FIXTURES / "colota_cv.json", {
        "originals": FIXTURES / "colota_cv_original.csv",
        "modified": FIXTURES / "colota_cv_modified.csv"}),
    "fx-tgcsr": ("tgcsr", FIXTURES / "tgcsr_ctx-tf.jsonl", {}),
    "fx-tgcsr-gt": ("tgcsr", FIXTURES / "tgcsr_ctx-tf-gt.jsonl", {}),
    "fx-comparisonqa": ("comparisonqa", FIXTURES / "comparisonqa_small.json", {}),
}
ALL_CASES = {**REAL_CASES, **FIXTURE_CASES}
RANKED_BY = {"creak": "accuracy", "colota": "popularity.tail.accuracy", "tgcsr": "f1", "comparisonqa": "accuracy"}
"""Each benchmark's paper ranks by this (docs/METRICS.md, Metric paths: CoLoTa by tail accuracy, TG-CSR by F1)."""
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/datasets is not present")
CASE_PARAMS = [pytest.param(name, marks=needs_real if name in REAL_CASES else ())
               for name in ALL_CASES]


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines output file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[ImportReport, Path]]:
    """Import each case once per module, on first use."""

    class Lazy(dict[str, tuple[ImportReport, Path]]):
        def __missing__(self, name: str) -> tuple[ImportReport, Path]:
            fmt, source, options = ALL_CASES[name]
            outdir = tmp_path_factory.mktemp(name) / "out"
            self[name] = (run_import(fmt, source, outdir, **options), outdir)
            return self[name]

    return Lazy()


def source_record_count(fmt: str, source: Path, options: dict[str, Path]) -> int:
    """Count the records of a source file (plus an originals CSV) independently."""
    text = source.read_text("utf-8")
    lines = fmt in ("creak", "tgcsr")
    count = sum(1 for line in text.splitlines() if line.strip()) if lines else len(json.loads(text))
    if "originals" in options:
        rows = options["originals"].read_text("utf-8").splitlines()[1:]
        count += sum(1 for row in rows if row.strip())
    return count


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_label_file_follows_spec(name: str, imported: dict[str, tuple[ImportReport, Path]]) -> None:
    _, outdir = imported[name]
    if not (outdir / "labels.jsonl").exists():
        pytest.skip("this source has no hidden labels")
    labels = jsonl(outdir / "labels.jsonl")
    phase = json.loads((outdir / "phase.json").read_text("utf-8"))
    ids = [r["id"] for r in labels]
    assert labels and len(ids) == len(set(ids))
    assert all(isinstance(i, str) and i for i in ids)
    assert all(r.get("split", "public") in ("public", "private") for r in labels)
    if phase["task_type"] == "binary":
        assert {type(r["label"]) for r in labels} == {bool}
    else:
        assert {r["label"] for r in labels} <= set(phase["options"])
    assert phase["primary_metric"] == RANKED_BY[ALL_CASES[name][0]]


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_default_views_rank_by_what_the_label_file_can_produce(
        name: str, imported: dict[str, tuple[ImportReport, Path]]) -> None:
    """Every path the importer's phase.json names (primary metric, views, columns) exists for its labels."""
    _, outdir = imported[name]
    if not (outdir / "labels.jsonl").exists():
        pytest.skip("this source has no hidden labels")
    labels = load_labels(outdir / "labels.jsonl", outdir / "phase.json")
    config = json.loads((outdir / "phase.json").read_text("utf-8"))
    views = check_views(config.get("views"))
    check_paths(labels, config_paths(config["primary_metric"], views))  # raises naming a missing path
    assert views_of(views, primary_metric=config["primary_metric"])[0].metric == config["primary_metric"]


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_questions_never_carry_a_label_or_answer_field(
        name: str, imported: dict[str, tuple[ImportReport, Path]]) -> None:
    _, outdir = imported[name]
    if not (outdir / "questions.jsonl").exists():
        assert (outdir / "train.jsonl").exists()  # public training data only
        return
    questions = jsonl(outdir / "questions.jsonl")
    phase = json.loads((outdir / "phase.json").read_text("utf-8"))
    keys = {key for record in questions for key in record}
    assert keys <= question_fields(phase)  # the platform's allow list, with the fields phase.json marks public
    assert not (set(phase["public_fields"]) | keys) & {
        "label", "split", "answer", "explanation", "inference_rule", "reasoning_steps", "kg_triples", "gt",
        "labels", "original", "agreement"}
    assert set(phase["public_fields"]).isdisjoint(ALWAYS_PUBLIC)
    if (outdir / "labels.jsonl").exists():
        assert [q["id"] for q in questions] == [r["id"] for r in jsonl(outdir / "labels.jsonl")]


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_every_source_record_appears_in_the_report(
        name: str, imported: dict[str, tuple[ImportReport, Path]]) -> None:
    report, outdir = imported[name]
    fmt, source, options = ALL_CASES[name]
    places = {(e.file, e.line, e.index) for e in report.entries}
    assert len(places) == source_record_count(fmt, source, options)
    assert all(e.action in ("kept", "changed", "skipped") for e in report.entries)
    assert all(e.reason for e in report.entries if e.action == "skipped")
    assert jsonl(outdir / "report.jsonl") == [e.to_json() for e in report.entries]


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_kept_and_changed_entries_are_exactly_the_items_written(
        name: str, imported: dict[str, tuple[ImportReport, Path]]) -> None:
    report, outdir = imported[name]
    written_file = next(outdir / f for f in ("labels.jsonl", "train.jsonl", "questions.jsonl")
                        if (outdir / f).exists())
    written = [r["id"] for r in jsonl(written_file)]
    reported = [e.id or "" for e in report.entries if e.action != "skipped"]
    assert sorted(written) == sorted(reported)
    assert report.kept + report.changed == len(written)
    assert all(e.id is None for e in report.entries if e.action == "skipped")


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_labels_load_with_the_phase_config(
        name: str, imported: dict[str, tuple[ImportReport, Path]]) -> None:
    labels_module = pytest.importorskip("scoring.labels")
    if not hasattr(labels_module, "load_labels"):
        pytest.skip("scoring.load_labels is not written yet")
    _, outdir = imported[name]
    if not (outdir / "labels.jsonl").exists():
        pytest.skip("this source has no hidden labels")
    label_set = labels_module.load_labels(outdir / "labels.jsonl", outdir / "phase.json")
    assert label_set.n == len(jsonl(outdir / "labels.jsonl"))
