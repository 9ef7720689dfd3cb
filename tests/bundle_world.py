"""Competition bundles built in the tests (as tests/scoring builds them), dated around today so a phase is open.

``codalab_bundle()`` (v1: phases by number, reference data and scoring program as zips
inside the bundle) and ``codabench_bundle()`` (v2: tasks and phases lists, folders). Both
programs score accuracy as ``correct / len(truth)`` over lines; CodaLab's also writes an
AUC that Tailboard does not compute (a "not carried" line of the report).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tests.scoring.bundle_support import draws, lines_of, share_right, zip_of

__all__ = ["BundleCase", "codabench_bundle", "codalab_bundle", "draws", "lines_of", "share_right"]

TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
DAY = timedelta(days=1)

CODALAB_PROGRAM = """#!/usr/bin/env python
import sys, os
from sklearn.metrics import roc_auc_score

truth = [line.strip() for line in open(os.path.join(sys.argv[1], 'ref', 'truth.txt'))]
pred = [line.strip() for line in open(os.path.join(sys.argv[1], 'res', 'answer.txt'))]
n_correct = 0
for t, p in zip(truth, pred):
    if t == p:
        n_correct += 1
out = open(os.path.join(sys.argv[2], 'scores.txt'), 'w')
out.write("acc: %f\\n" % (n_correct / float(len(truth))))
out.write("auc: %f\\n" % roc_auc_score([t == 'yes' for t in truth], [p == 'yes' for p in pred]))
"""

CODABENCH_PROGRAM = """import json, os, sys
import numpy as np

truth = np.genfromtxt(os.path.join(sys.argv[1], 'ref', 'bins'))
guess = np.genfromtxt(os.path.join(sys.argv[1], 'res', 'bins'))
correct = sum(1 for t, g in zip(truth, guess) if t == g)
with open(os.path.join(sys.argv[2], 'scores.json'), 'w') as out:
    out.write(json.dumps({'share_right': correct / len(truth)}))
"""


@dataclass(frozen=True)
class BundleCase:
    """A bundle and what importing it must give: per phase (name, start, end, per day, total, items), the truth."""

    data: bytes
    title: str
    phases: tuple[tuple[str, datetime | None, datetime | None, int | None, int | None, int], ...]
    truth: tuple[list[str], ...]
    classes: list[str]
    not_carried: str  # a line the report must hold


def _day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def codalab_bundle() -> BundleCase:
    """Return a CodaLab v1 bundle: Practice (open now, 4 a day, 50 in all) then Test (next month)."""
    practice, test = draws(31, 24, ["yes", "no"]), draws(32, 16, ["yes", "no"])
    start, second, end = TODAY - 10 * DAY, TODAY + 30 * DAY, TODAY + 60 * DAY
    yaml = f"""
title: Claims Yes or No
description: Answer each claim with yes or no.
image: logo.jpg
phases:
  1:
    phasenumber: 1
    label: Practice
    description: Warm up.
    start_date: {_day(start)}
    max_submissions_per_day: 4
    max_submissions: 50
    reference_data: practice_ref.zip
    scoring_program: program.zip
  2:
    phasenumber: 2
    label: Test
    start_date: {_day(second)}
    max_submissions: 3
    reference_data: test_ref.zip
    scoring_program: program.zip
end_date: {_day(end)}
leaderboard:
  leaderboards:
    Results: &RESULTS
      label: Results
      rank: 1
  columns:
    acc:
      leaderboard: *RESULTS
      label: Accuracy
      rank: 1
    auc:
      leaderboard: *RESULTS
      label: AUC
      rank: 2
"""
    data = zip_of({
        "competition.yaml": yaml,
        "practice_ref.zip": zip_of({"truth.txt": lines_of(practice)}),
        "test_ref.zip": zip_of({"truth.txt": lines_of(test)}),
        "program.zip": zip_of({"evaluate.py": CODALAB_PROGRAM, "metadata": "command: python $program/evaluate.py\n"}),
    })
    return BundleCase(data=data, title="Claims Yes or No",
                      phases=(("Practice", start, second, 4, 50, 24), ("Test", second, end, None, 3, 16)),
                      truth=(practice, test), classes=["yes", "no"],
                      not_carried="computed with roc_auc_score, which Tailboard does not have")


def codabench_bundle() -> BundleCase:
    """Return a Codabench v2 bundle: Warm-up (open now, 3 a day, 30 in all, folders) then Final (a zip, no end)."""
    warmup, final = draws(41, 18, ["0", "1", "2"]), draws(42, 12, ["0", "1", "2"])
    start, end, later = TODAY - 3 * DAY, TODAY + 20 * DAY + 12 * timedelta(hours=1), TODAY + 40 * DAY
    yaml = f"""
version: 2
title: Sorting Pebbles Live
description: Put each pebble in one of three bins.
image: logo.png
tasks:
  - index: 0
    name: Warm-up task
    reference_data: warmup/reference_data/
    scoring_program: scoring_program/
  - index: 1
    name: Final task
    reference_data: final_reference.zip
    scoring_program: scoring_program/
phases:
  - index: 0
    name: Warm-up
    description: Try things.
    start: {_day(start)}
    end: {end:%Y-%m-%d %H:%M:%S}
    max_submissions_per_day: 3
    max_submissions: 30
    tasks: [0]
  - index: 1
    name: Final
    start: {_day(later)}
    max_submissions: 2
    tasks: [1]
leaderboards:
  - title: Results
    key: main
    columns:
      - title: Share right
        key: share_right
        index: 0
        sorting: desc
"""
    data = zip_of({
        "competition.yaml": yaml,
        "logo.png": b"\x89PNG",
        "warmup/reference_data/bins": lines_of(warmup),
        "scoring_program/score.py": CODABENCH_PROGRAM,
        "final_reference.zip": zip_of({"bins": lines_of(final)}),
    })
    return BundleCase(data=data, title="Sorting Pebbles Live",
                      phases=(("Warm-up", start, end, 3, 30, 18), ("Final", later, None, None, 2, 12)),
                      truth=(warmup, final), classes=["0", "1", "2"],
                      not_carried="image 'logo.png': the competition image is not imported")
