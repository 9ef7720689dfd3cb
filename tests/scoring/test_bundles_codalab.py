"""A CodaLab (v1) bundle built here from scratch: phases by number, ends from the next start, columns by rank.

Its scoring program writes ``f1_yes`` (scikit-learn's binary F1), ``acc`` (a hand-written
``n_correct / len``) and ``auc``; the first two become metric paths, the third is reported.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from bundle_support import draws, f1_of_yes, lines_of, share_right, zip_of

from scoring.bundles import BundlePlan, read_bundle
from scoring.evaluate import evaluate
from scoring.predictions import read_predictions

YAML = """
title: Yes or No
description: Answer each claim.
image: logo.jpg
html:
  overview: overview.html
  terms: terms.html
phases:
  2:
    phasenumber: 2
    label: Test
    start_date: 2024-02-15 18:00:00+02:00
    max_submissions: 5
    reference_data: test_ref.zip
    scoring_program: program.zip
    is_scoring_only: True
  1:
    phasenumber: 1
    label: Practice
    description: Warm up.
    start_date: 2024-01-15
    max_submissions_per_day: 10
    max_submissions: 100
    reference_data: practice_ref.zip
    scoring_program: program.zip
    public_data: practice_public.zip
end_date: 2024-03-31
leaderboard:
  leaderboards:
    Results: &RESULTS
      label: Results
      rank: 1
  columns:
    auc:
      leaderboard: *RESULTS
      label: AUC
      rank: 3
    f1_yes:
      leaderboard: *RESULTS
      label: F1 (yes)
      rank: 1
    acc:
      leaderboard: *RESULTS
      label: Accuracy
      rank: 2
"""
PROGRAM = """#!/usr/bin/env python
import sys, os
from sklearn.metrics import f1_score, roc_auc_score

truth = [line.strip() for line in open(os.path.join(sys.argv[1], 'ref', 'truth.txt'))]
pred = [line.strip() for line in open(os.path.join(sys.argv[1], 'res', 'answer.txt'))]
f1 = f1_score(truth, pred, pos_label='yes')
n_correct = 0
for t, p in zip(truth, pred):
    if t == p:
        n_correct += 1
out = open(os.path.join(sys.argv[2], 'scores.txt'), 'w')
out.write("f1_yes: %f\\n" % f1)
out.write("acc: %f\\n" % (n_correct / float(len(truth))))
out.write("auc: %f\\n" % roc_auc_score([t == 'yes' for t in truth], [p == 'yes' for p in pred]))
"""
PRACTICE = draws(11, 30, ["yes", "no"])
TEST_IDS = [f"claim-{n:03d}" for n in range(1, 21)]
TEST = draws(12, 20, ["yes", "no"])


def bundle() -> bytes:
    test_table = "qid\tgold\n" + "".join(f"{i}\t{v}\n" for i, v in zip(TEST_IDS, TEST, strict=True))
    return zip_of({
        "competition.yaml": YAML,
        "overview.html": "<h1>Yes or No</h1>",
        "terms.html": "<p>Play fair.</p>",
        "practice_ref.zip": zip_of({"truth.txt": lines_of(PRACTICE)}),
        "test_ref.zip": zip_of({"ref/": b"", "ref/truth.tsv": test_table}),
        "program.zip": zip_of({"evaluate.py": PROGRAM, "metadata": "command: python $program/evaluate.py\n"}),
        "practice_public.zip": zip_of({"claims.txt": "..."}),
    })


@pytest.fixture(scope="module")
def plan() -> BundlePlan:
    return read_bundle(bundle())


def test_the_competition_and_its_html_pages_are_carried(plan: BundlePlan) -> None:
    assert (plan.format, plan.title, plan.description) == ("codalab", "Yes or No", "Answer each claim.")
    assert [(p.title, p.format, p.source) for p in plan.pages] == [("overview", "html", "overview.html"),
                                                                   ("terms", "html", "terms.html")]


def test_phases_run_from_their_start_to_the_next_start_and_the_last_to_the_end_date(plan: BundlePlan) -> None:
    practice, test = plan.phases
    assert (practice.name, practice.description, practice.start, practice.end) == (
        "Practice", "Warm up.", datetime(2024, 1, 15, tzinfo=UTC), datetime(2024, 2, 15, 16, tzinfo=UTC))
    assert (test.name, test.start, test.end) == ("Test", datetime(2024, 2, 15, 16, tzinfo=UTC),
                                                 datetime(2024, 3, 31, tzinfo=UTC))
    assert (practice.max_per_day, practice.max_total, test.max_per_day, test.max_total) == (10, 100, None, 5)


def test_yes_no_labels_become_a_binary_task_ranked_by_the_first_column_matched(plan: BundlePlan) -> None:
    practice, test = plan.phases
    assert practice.config == {"task_type": "binary", "primary_metric": "f1", "breakdowns": [],
                               "prediction_format": "lines"}
    assert practice.labels.decode().splitlines()[0] == f'{{"id": "1", "label": {str(PRACTICE[0] == "yes").lower()}}}'
    assert test.config == {"task_type": "binary", "primary_metric": "f1", "breakdowns": []}
    assert test.load().ids.to_pylist() == TEST_IDS
    assert test.source == "test_ref.zip/ref/truth.tsv"


@pytest.mark.parametrize("seed", [21, 22])
def test_files_score_with_tailboard_as_with_the_bundles_own_rules(plan: BundlePlan, seed: int) -> None:
    practice, test = plan.phases
    guess = draws(seed, len(PRACTICE), ["yes", "no"])
    labels = practice.load()
    overall = evaluate(labels, read_predictions(lines_of(guess).encode(), labels))["overall"]
    assert overall["f1"] == pytest.approx(f1_of_yes(PRACTICE, guess), abs=1e-15)
    assert overall["accuracy"] == share_right(PRACTICE, guess)
    guess = draws(seed, len(TEST), ["yes", "no"])
    labels = test.load()
    file = "id,prediction\n" + "".join(f"{i},{v}\n" for i, v in reversed(list(zip(TEST_IDS, guess, strict=True))))
    overall = evaluate(labels, read_predictions(file.encode(), labels))["overall"]
    assert overall["accuracy"] == share_right(TEST, guess)


def test_the_report_names_each_column_and_what_was_left(plan: BundlePlan) -> None:
    lines = plan.report_lines()
    for line in [
        "carried: reference test_ref.zip/ref/truth.tsv → the label file of phase 2 'Test': 20 items (TSV with "
        "the id column 'qid' and the label column 'gold'), a binary task",
        "carried: phase 1 'Practice': column 'F1 (yes)' (f1_yes) → metric path f1 (the value the scoring program "
        "writes as 'f1_yes' is computed as f1); the phase ranks by it",
        "carried: phase 1 'Practice': column 'Accuracy' (acc) → metric path accuracy (the value the scoring "
        "program writes as 'acc' is computed as accuracy)",
        "not carried: phase 1 'Practice': column 'AUC' (auc): the value the scoring program writes as 'auc' is "
        "computed with roc_auc_score, which Tailboard does not have",
        "not carried: phase 'Practice': public_data 'practice_public.zip': not imported; upload it as a public "
        "file of the phase",
        "not carried: image 'logo.jpg': the competition image is not imported",
    ]:
        assert line in lines
