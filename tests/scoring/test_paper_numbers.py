"""Paper tables as a check: numbers from each benchmark's paper, reproduced through the platform.

Every test builds its phase from the real released file in ``../shared/datasets/`` with
the importer (``run_import``, behind ``python -m scoring import``) and scores an uploaded
CSV with ``scoring.read_predictions`` and ``scoring.evaluate``. Where the released files
cannot reproduce a paper figure (CoLoTa ships no model outputs, ComparisonQA only two
example records), the test checks a count the paper or the release states instead. All
of them skip, saying why, when ``../shared/datasets`` is not beside the checkout.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from paper_support import Phase, import_phase, jsonl, ranked_value, released, score_csv
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.svm import LinearSVC

from scoring.importers import run_import

# --- CREAK: TF-IDF + linear SVM, dev 60.2 and contrast set 53.8 -------------------------


@pytest.fixture(scope="module")
def creak_svm(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    """Fit the TF-IDF + linear SVM baseline on the train.jsonl the importer publishes.

    Word uni- and bigrams (``ngram_range=(1, 2)``, otherwise TfidfVectorizer's defaults:
    lowercase, ``(?u)\\b\\w\\w+\\b`` tokens, smooth idf, l2 norm) over ``sentence``,
    then ``LinearSVC(random_state=0)`` with default C=1.0. Unigrams alone give 0.5945 on
    dev and 0.5420 on the contrast set; the bigram setting is the one that gives the
    paper's figures (checked with scikit-learn 1.9.1).
    """
    outdir = tmp_path_factory.mktemp("creak") / "train"
    run_import("creak", released("creak", "train.json"), outdir)
    train = jsonl(outdir / "train.jsonl")
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2)), LinearSVC(random_state=0))
    model.fit([r["sentence"] for r in train], [r["label"] for r in train])
    return model


@pytest.mark.parametrize(("source", "expected", "paper"), [
    ("dev.json", 0.6018, 60.2),
    ("contrast_set.json", 0.5380, 53.8),
])
def test_creak_tfidf_svm_baseline_scores_the_papers_accuracy(
        creak_svm: Pipeline, tmp_path: Path, source: str, expected: float, paper: float) -> None:
    phase = import_phase("creak", released("creak", source), tmp_path / "phase")
    questions = phase.questions()
    predicted = creak_svm.predict([q["sentence"] for q in questions])
    result = score_csv(phase.labels, {q["id"]: "true" if p else "false"
                                      for q, p in zip(questions, predicted, strict=True)})
    assert phase.labels.config.primary_metric == "accuracy"  # the paper's table ranks by accuracy
    accuracy = ranked_value(result, phase.labels.config.primary_metric)
    assert result["overall"]["n"] == result["overall"]["answered"] == len(questions)
    assert round(accuracy, 4) == expected
    assert abs(100 * accuracy - paper) <= 0.6
    if source == "contrast_set.json":  # contrast consistency: 248 two-claim pairs, both claims right
        assert [v.metric for v in phase.labels.config.views] == ["accuracy", "group_accuracy"]
        consistency = ranked_value(result, "group_accuracy")
        assert 0 < consistency < accuracy


# --- TG-CSR: leave-one-annotator-out human F1, vacationing abroad, about 0.806 -----------

TGCSR = "vacationing-abroad-{}.jsonl"


def _nan_as_none(token: str) -> Any:
    return None if token == "NaN" else float(token)


def _rows(source: Path) -> list[dict[str, Any]]:
    lines = source.read_text("utf-8").splitlines()
    return [json.loads(line, parse_constant=_nan_as_none) for line in lines if line]


def _votes(row: dict[str, Any]) -> dict[str, int | None]:
    return {v["annotatorID"]: v["label"] for v in row["labels"]}


def _item_id(row: dict[str, Any]) -> str:
    return f"{row['questionID']}-{row['answerID']}"


def _held_out_phase(rows: list[dict[str, Any]], annotator: str, tmp_path: Path) -> Phase:
    """Import the context with one annotator's votes removed (labels: the others' majority)."""
    source = tmp_path / f"without-{annotator}.jsonl"
    kept = [{**r, "labels": [v for v in r["labels"] if v["annotatorID"] != annotator]}
            for r in rows]
    source.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return import_phase("tgcsr", source, tmp_path / f"phase-{annotator}")


def _direct_f1(rows: list[dict[str, Any]], annotator: str) -> float:
    """F1 of one annotator against the others' majority, counted straight from the file."""
    tp = fp = fn = 0
    for row in rows:
        votes = _votes(row)
        others = [v for who, v in votes.items() if who != annotator and v is not None]
        if not others:
            continue
        gold, mine = 2 * sum(others) >= len(others), votes.get(annotator)
        tp += bool(mine == 1 and gold)
        fp += bool(mine == 1 and not gold)
        fn += bool(mine != 1 and gold)  # a missing vote on a positive item is a miss
    return 2 * tp / (2 * tp + fp + fn)


@pytest.mark.parametrize(("kind", "items", "expected"), [("mc", 331, 0.8073), ("tf", 326, 0.8036)])
def test_tgcsr_leave_one_annotator_out_human_f1_is_the_papers_80_5(
        tmp_path: Path, kind: str, items: int, expected: float) -> None:
    """Human F1 on vacationing abroad: 0.8073 (mc file) and 0.8036 (tf file).

    For each annotator A..F: build the phase through the importer from the released
    file with that annotator's votes removed, so each item's label is the majority of
    the other annotators' non-missing votes, a tie counting as yes (docs/LONG_TAIL.md), and an
    item none of the others voted on is skipped. Predict every item of that phase with
    the held-out annotator's own vote (1 true, 0 false, a NaN vote left empty, which is
    an abstention and so a false negative on a true item), upload it as a CSV, and take
    the platform's overall ``f1`` (positive class true). The human F1 is the unweighted
    mean of the six annotators' F1. The paper reports 80.5; the issue expects about
    0.806. The third-party ``-gt`` files resolve the three leave-one-out ties of the mc
    file (VC58-VC65 without D's vote) as no and skip own missing votes: 0.8057.
    """
    source = released("tg-csr", "jsonl", TGCSR.format(kind))
    rows = _rows(source)
    full = import_phase("tgcsr", source, tmp_path / "full")
    annotators = sorted({who for r in rows for who in _votes(r)})
    assert annotators == ["A", "B", "C", "D", "E", "F"]
    assert full.labels.n == items  # 331 pairs; 5 tf rows have no vote at all
    assert full.labels.config.primary_metric == "f1"  # the phase ranks by F1, as the paper does
    scores = {}
    for annotator in annotators:
        phase = _held_out_phase(rows, annotator, tmp_path)
        own = {_item_id(r): _votes(r).get(annotator) for r in rows}
        answers = {q["id"]: "" if own[q["id"]] is None else str(own[q["id"]])
                   for q in phase.questions()}
        scores[annotator] = ranked_value(score_csv(phase.labels, answers), phase.labels.config.primary_metric)
        assert scores[annotator] == pytest.approx(_direct_f1(rows, annotator), abs=1e-12)
    human_f1 = sum(scores.values()) / len(scores)
    assert round(human_f1, 4) == expected
    assert abs(human_f1 - 0.806) <= 0.01 and abs(human_f1 - 0.805) <= 0.01


# --- CoLoTa: no released model outputs; the paper's query counts instead -----------------


@pytest.mark.parametrize(("task", "records", "tail", "head"), [
    ("cv", 1650, 1649, 150),
    ("qa", 1691, 1689, 149),
])
def test_colota_phase_counts_against_the_papers_1650_queries_per_task(
        tmp_path: Path, task: str, records: int, tail: int, head: int) -> None:
    """CoLoTa's paper states 3,300 queries, 1,650 per task, each task from 150 originals.

    The release ships no model outputs (baselines/data holds only the original and
    modified queries), so no accuracy in the paper can be recomputed. The CV file holds
    the paper's 1,650 records (150 originals times 11); the QA file holds 1,691, 41 more
    than the paper states. Through the platform: CV gives 1,649 long-tail items (the
    second C150 skipped) and 150 head originals; QA gives 1,689 (the second S200 and
    S39, whose answer is not a boolean, skipped) and 149 head originals (S81 has no
    answer).
    """
    source = released("colota", f"CoLoTa_{task}.json")
    originals = released("colota", "baselines", "data", f"{task.upper()}-original.csv")
    assert len(json.loads(source.read_text("utf-8"))) == records
    phase = import_phase("colota", source, tmp_path / "phase", originals=originals)
    result = score_csv(phase.labels, {q["id"]: "true" for q in phase.questions()})
    assert (result["popularity"]["tail"]["n"], result["popularity"]["head"]["n"]) == (tail, head)
    for view in phase.labels.config.views:  # Long tail and Overall: every column is in the result
        assert all(ranked_value(result, path) is not None for path in view.paths)
    assert result["overall"]["n"] == tail + head == phase.report.kept + phase.report.changed
    assert "torso" not in result["popularity"]


# --- ComparisonQA: two example records; the paper's frequency sides instead ---------------


def test_comparisonqa_example_pairs_sit_on_the_papers_frequency_sides(tmp_path: Path) -> None:
    """The release holds 2 of the paper's pairs; each high entity is above 185 relationships.

    The paper's 283K-pair test file is not in the release (an absent LFS object), so no
    accuracy can be recomputed. Through the platform: the 2 example records become 4
    items in 2 complete head/tail pairs (high counts 193 and 278 above the paper's 185,
    low counts 98 and 38 below its 107). A file right on both high questions and wrong
    on both low ones scores head_only 1.0 over 2 pairs.
    """
    source = released("comparisonqa", "comparisonqa_test_example.json")
    records = json.loads(source.read_text("utf-8"))
    assert len(records) == 2
    assert all(int(r["high_relationshipCount"]) > 185 > 107 > int(r["low_relationshipCount"])
               for r in records)
    phase = import_phase("comparisonqa", source, tmp_path / "phase")
    gold = {r["id"]: r["label"] for r in jsonl(phase.outdir / "labels.jsonl")}
    wrong = {"A": "B", "B": "C", "C": "D", "D": "A"}
    answers = {i: label if i.endswith("-high") else wrong[label] for i, label in gold.items()}
    result = score_csv(phase.labels, answers)
    assert Counter(i.rsplit("-", 1)[1] for i in gold) == {"high": 2, "low": 2}
    assert result["popularity"]["head"]["accuracy"] == 1.0 == result["pairs"]["head_only"]
    assert result["popularity"]["tail"]["accuracy"] == 0.0
    assert (result["pairs"]["n_pairs"], result["pairs"]["incomplete_pairs"]) == (2, 0)
