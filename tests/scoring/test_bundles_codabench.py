"""A Codabench (v2) bundle built here from scratch reads into phases with their dates, limits, labels and metric.

The bundle's own scoring program counts equal lines (``correct / len(truth)``); a
line-ordered prediction file scores the same with Tailboard on the converted labels.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from bundle_support import draws, lines_of, share_right, zip_of

from scoring.bundles import BundlePlan, read_bundle
from scoring.evaluate import evaluate
from scoring.predictions import read_predictions

YAML = """
version: 2
title: Sorting Pebbles
description: Put each pebble in one of three bins.
image: logo.png
terms: pages/terms.md
pages:
  - title: Overview
    file: pages/overview.md
tasks:
  - index: 0
    name: Warm-up task
    reference_data: warmup/reference_data/
    scoring_program: scoring_program/
    ingestion_program: ingestion_program/
  - index: 1
    name: Final task
    reference_data: final_reference.zip
    scoring_program: scoring_program.zip
solutions:
  - index: 0
    tasks: [0]
    path: solution/
phases:
  - index: 1
    name: Final
    start: 2025-05-01
    max_submissions: 2
    tasks: [1]
  - index: 0
    name: Warm-up
    description: Try things.
    start: 3-1-2025
    end: 2025-04-30 12:00:00
    max_submissions_per_day: 4
    max_submissions: 40
    tasks: [0]
leaderboards:
  - title: Results
    key: main
    columns:
      - title: Seconds
        key: seconds
        index: 1
        sorting: asc
      - title: Share right
        key: share_right
        index: 0
        sorting: desc
"""
PROGRAM = """import json, os, sys
import numpy as np

truth = np.genfromtxt(os.path.join(sys.argv[1], 'ref', 'bins'))
guess = np.genfromtxt(os.path.join(sys.argv[1], 'res', 'bins'))
correct = sum(1 for t, g in zip(truth, guess) if t == g)
scores = {
    'share_right': correct / len(truth),
    'seconds': 0.0,
}
with open(os.path.join(sys.argv[2], 'scores.json'), 'w') as out:
    out.write(json.dumps(scores))
"""
WARMUP = draws(1, 12, ["0", "1", "2"])
FINAL = draws(2, 15, ["0", "1", "2"])


def bundle() -> bytes:
    """Return the bundle: the warm-up's files as folders, the final's as zips inside the bundle."""
    return zip_of({
        "competition.yaml": YAML,
        "logo.png": b"\x89PNG",
        "pages/terms.md": "# Terms\nBe kind.\n",
        "pages/overview.md": "# Pebbles\n",
        "warmup/reference_data/bins": lines_of(WARMUP),
        "scoring_program/score.py": PROGRAM,
        "scoring_program/metadata.yaml": "command: python3 /app/program/score.py /app/input /app/output\n",
        "ingestion_program/ingest.py": "print('runs the code')\n",
        "final_reference.zip": zip_of({"bins": lines_of(FINAL), "metadata": "description: truth\n"}),
        "scoring_program.zip": zip_of({"score.py": PROGRAM}),
        "solution/model.py": "class Model: pass\n",
    })


@pytest.fixture(scope="module")
def plan() -> BundlePlan:
    return read_bundle(bundle())


def test_the_competition_and_its_pages_are_carried(plan: BundlePlan) -> None:
    assert (plan.format, plan.title, plan.description) == ("codabench", "Sorting Pebbles",
                                                           "Put each pebble in one of three bins.")
    assert [(p.title, p.format, p.content) for p in plan.pages] == [
        ("Overview", "markdown", "# Pebbles\n"), ("Terms", "markdown", "# Terms\nBe kind.\n")]


def test_phases_keep_their_order_dates_in_utc_and_limits(plan: BundlePlan) -> None:
    warmup, final = plan.phases
    assert (warmup.position, warmup.name, warmup.description) == (1, "Warm-up", "Try things.")
    assert (warmup.start, warmup.end) == (datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 4, 30, 12, tzinfo=UTC))
    assert (warmup.max_per_day, warmup.max_total) == (4, 40)
    assert (final.position, final.name, final.start, final.end) == (2, "Final", datetime(2025, 5, 1, tzinfo=UTC),
                                                                    None)
    assert (final.max_per_day, final.max_total) == (None, 2)


def test_reference_data_becomes_a_label_file_keyed_by_line(plan: BundlePlan) -> None:
    warmup, final = plan.phases
    assert (warmup.n_items, warmup.source) == (12, "warmup/reference_data/bins")
    assert (final.n_items, final.source) == (15, "final_reference.zip/bins")
    first = warmup.labels.decode().splitlines()[0]
    assert first == f'{{"id": "1", "label": "{WARMUP[0]}"}}'
    labels = final.load()
    assert labels.ids.to_pylist() == [str(i) for i in range(1, 16)]
    assert warmup.config == {"task_type": "multiple_choice", "primary_metric": "accuracy", "breakdowns": [],
                             "options": ["0", "1", "2"], "prediction_format": "lines"}


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_file_scores_with_tailboard_as_with_the_bundles_own_rule(plan: BundlePlan, seed: int) -> None:
    for phase, truth in zip(plan.phases, (WARMUP, FINAL), strict=True):
        guess = draws(seed, len(truth), ["0", "1", "2"])
        written = [f"{float(v):.18e}" if i % 2 else v for i, v in enumerate(guess)]  # as numpy.savetxt writes
        labels = phase.load()
        result = evaluate(labels, read_predictions(lines_of(written).encode(), labels))
        assert result["overall"]["accuracy"] == share_right(truth, written)


def test_the_report_says_what_became_what_and_what_was_left(plan: BundlePlan) -> None:
    lines = plan.report_lines()
    expected = [
        "carried: phase 'Warm-up' → phase 1 'Warm-up': from 2025-03-01 00:00 UTC to 2025-04-30 12:00 UTC; "
        "4 submissions a day, at most 40 in all",
        "carried: phase 'Final' → phase 2 'Final': from 2025-05-01 00:00 UTC to none; no daily limit in the bundle "
        "(Tailboard's default applies), at most 2 in all",
        "carried: reference final_reference.zip/bins → the label file of phase 2 'Final': 15 items (one label per "
        "line; ids 1, 2, ... by line), multiple choice with options 0, 1, 2; predictions may be one value per "
        "line, in this order",
        "carried: phase 1 'Warm-up': column 'Share right' (share_right) → metric path accuracy (the value the "
        "scoring program writes as 'share_right' is computed as accuracy); the phase ranks by it",
        "not carried: phase 1 'Warm-up': column 'Seconds' (seconds): the value the scoring program writes as "
        "'seconds' is no metric Tailboard computes",
        "not carried: image 'logo.png': the competition image is not imported",
        "not carried: 1 solution(s): example submissions are not imported",
        "not carried: ingestion program 'ingestion_program/' (phase 'Warm-up'): code submissions are not taken; "
        "participants upload the predictions their code makes",
    ]
    for line in expected:
        assert line in lines
    assert any(line.startswith("not carried: scoring program 'scoring_program/': Tailboard runs no program")
               for line in lines)
    assert lines.index(expected[0]) < lines.index(expected[1])
