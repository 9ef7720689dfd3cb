"""TG-CSR's unanswered candidates: how the platform scores them, checked against what the benchmark defines.

TG-CSR encodes every (question, candidate) pair as 1 (a good fit) or 0 (not); it has
no third answer, and ranks by F1 of the 1s. On the platform an abstention on a right
candidate is a false negative and on a wrong one neither a true nor a false positive,
so F1 scores it exactly as a 0; accuracy and group accuracy count it wrong (an
abstention is never correct), which a 0 on a wrong candidate is not.

The annotators' own missing votes (bare NaN) are left out of the majority that makes
the label. The paper's human figure (80.5 F1 on vacationing abroad, each annotator
against the others) does not tell whether an annotator's own missing vote was scored
as a miss or left out: both readings land within 0.4 points of it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from paper_support import import_phase, released, score_csv

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "importers" / "tgcsr_ctx-tf-gt.jsonl"


def _answers(ids: list[str], seed: int) -> dict[str, str]:
    """Return 1, 0 or an empty cell (an abstention, about a quarter) per item."""
    rnd = random.Random(seed)
    return {i: rnd.choice(["1", "0", "1", "0", "", "0"]) for i in ids}


@pytest.mark.parametrize("context", ["vacationing-abroad-mc", "camping-tf", "dental-cleaning-mc"])
def test_f1_scores_an_abstention_as_a_0_and_accuracy_as_wrong(tmp_path: Path, context: str) -> None:
    phase = import_phase("tgcsr", released("tg-csr", "jsonl", f"{context}.jsonl"), tmp_path / "phase")
    assert phase.labels.config.primary_metric == "f1"
    ids = [q["id"] for q in phase.questions()]
    gold = dict(zip(ids, phase.labels.gold.tolist(), strict=True))
    blank = _answers(ids, 3)
    as_no = {i: a or "0" for i, a in blank.items()}
    with_blanks, with_zeros = score_csv(phase.labels, blank), score_csv(phase.labels, as_no)
    assert with_blanks["overall"]["answered"] < len(ids)
    assert with_blanks["overall"]["f1"] == with_zeros["overall"]["f1"]
    for name, values in with_blanks["breakdowns"]["category"].items():
        assert values["f1"] == with_zeros["breakdowns"]["category"][name]["f1"]
    blanks_on_wrong = sum(1 for i, a in blank.items() if a == "" and gold[i] == 0)
    assert blanks_on_wrong > 0
    gained = with_zeros["overall"]["correct"] - with_blanks["overall"]["correct"]
    assert gained == blanks_on_wrong
    assert with_zeros["overall"]["group_accuracy"] >= with_blanks["overall"]["group_accuracy"]


def test_the_same_holds_on_the_small_fixture_without_shared_data(tmp_path: Path) -> None:
    phase = import_phase("tgcsr", FIXTURE, tmp_path / "phase")
    ids = [q["id"] for q in phase.questions()]
    answers = {i: "" if n % 2 else "1" for n, i in enumerate(ids)}
    zeros = {i: a or "0" for i, a in answers.items()}
    assert score_csv(phase.labels, answers)["overall"]["f1"] == score_csv(phase.labels, zeros)["overall"]["f1"]


def _rows(source: Path) -> list[dict[str, Any]]:
    return [json.loads(line, parse_constant=lambda _: None) for line in source.read_text("utf-8").splitlines()
            if line]


def _human_f1(rows: list[dict[str, Any]], *, leave_out_missing: bool) -> float:
    """Mean over annotators of F1 against the others' majority (tie yes), a missing vote a miss or left out."""
    scores = []
    for annotator in "ABCDEF":
        tp = fp = fn = 0
        for row in rows:
            votes = {v["annotatorID"]: v["label"] for v in row["labels"]}
            others = [v for who, v in votes.items() if who != annotator and v is not None]
            mine = votes.get(annotator)
            if not others or (mine is None and leave_out_missing):
                continue
            gold = 2 * sum(others) >= len(others)
            tp += mine == 1 and gold
            fp += mine == 1 and not gold
            fn += mine != 1 and gold
        scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores)


@pytest.mark.parametrize(("kind", "as_miss", "left_out"), [("mc", 0.8073, 0.8087), ("tf", 0.8036, 0.8041)])
def test_both_readings_of_an_annotators_missing_vote_give_about_the_papers_human_f1(
        kind: str, as_miss: float, left_out: float) -> None:
    rows = _rows(released("tg-csr", "jsonl", f"vacationing-abroad-{kind}.jsonl"))
    assert round(_human_f1(rows, leave_out_missing=False), 4) == as_miss  # the platform's reading
    assert round(_human_f1(rows, leave_out_missing=True), 4) == left_out
    assert abs(as_miss - 0.805) < 0.004 and abs(left_out - 0.805) < 0.004
