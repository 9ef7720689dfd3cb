"""LINT-style data in the generic label format: the demo example evaluates with statements known per bucket and domain.

``leaderboard/demo/lint_statements.jsonl`` is a label file with one item per templated
question (``group`` the statement, ``popularity`` head or tail, ``category`` the
domain); ``lint_phase.json`` ranks by ``group_accuracy`` (a statement is known when
all 13 of its questions are answered right) and ``lint_predictions.csv`` is a
made-up system's answers. The mapping is documented in scoring/importers/README.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from scoring import evaluate, load_labels, read_predictions
from scoring.producible import check_paths

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "leaderboard" / "demo"
LABELS, PHASE, PREDICTIONS = DEMO / "lint_statements.jsonl", DEMO / "lint_phase.json", DEMO / "lint_predictions.csv"
DOMAINS = {"temporal", "locational", "outcome and effect", "natural properties"}


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELS.read_text("utf-8").splitlines() if line]


def answers() -> dict[str, bool | None]:
    """The example predictions read plainly: yes True, no False, empty None (an abstention)."""
    lines = PREDICTIONS.read_text("utf-8").splitlines()
    assert lines[0] == "id,prediction"
    words = {"yes": True, "no": False, "": None}
    return {item: words[said] for item, said in (line.split(",") for line in lines[1:])}


def known_share(rows: list[dict[str, Any]], said: dict[str, bool | None]) -> float:
    """Share of the rows' statements whose every question is answered right, counted straight from the files."""
    statements: dict[str, bool] = {}
    for r in rows:
        statements[r["group"]] = statements.get(r["group"], True) and said[r["id"]] is r["label"]
    return sum(statements.values()) / len(statements)


def test_the_example_is_statements_times_13_templates_in_four_domains_head_and_tail() -> None:
    rows = records()
    by_statement: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_statement[r["group"]].append(r)
    assert len(by_statement) == 16 and len(rows) == 16 * 13
    for statement, items in by_statement.items():
        assert [r["id"] for r in items] == [f"{statement}_prompt_{t}" for t in range(13)]
        assert Counter(r["label"] for r in items) == {True: 6, False: 7}
        assert len({(r["popularity"], r["category"]) for r in items}) == 1
        assert statement.split("_")[1] == items[0]["popularity"]
    assert {r["category"] for r in rows} == DOMAINS
    assert Counter((r["popularity"], r["category"]) for r in rows) == {(b, d): 26 for b in ("head", "tail")
                                                                       for d in DOMAINS}


def test_the_example_evaluates_with_statements_known_per_bucket_and_domain() -> None:
    labels = load_labels(LABELS, PHASE)
    check_paths(labels, [p for v in labels.config.views for p in v.paths])
    result = evaluate(labels, read_predictions(PREDICTIONS.read_bytes(), labels))
    rows, said = records(), answers()
    assert result["overall"]["group_accuracy"] == pytest.approx(known_share(rows, said)) == 9 / 16
    for bucket, expected in (("head", 6 / 8), ("tail", 3 / 8)):
        chosen = [r for r in rows if r["popularity"] == bucket]
        assert result["popularity"][bucket]["group_accuracy"] == pytest.approx(known_share(chosen, said)) == expected
        assert result["popularity"][bucket]["ci"]["group_accuracy"] is not None
    assert result["popularity"]["gap"]["group_accuracy"] == pytest.approx(3 / 8)
    for domain in DOMAINS:
        chosen = [r for r in rows if r["category"] == domain]
        assert result["breakdowns"]["category"][domain]["group_accuracy"] == pytest.approx(known_share(chosen, said))
    assert result["overall"]["answered"] == 206 and result["overall"]["correct"] == 197  # two blanks, nine wrong
    assert result["popularity"]["head"]["accuracy"] > result["popularity"]["tail"]["accuracy"]


def test_the_readme_command_prints_group_accuracy_by_bucket_and_domain() -> None:
    done = subprocess.run([sys.executable, "-m", "scoring", "evaluate", "--labels", LABELS, "--predictions",
                           PREDICTIONS, "--config", PHASE], cwd=ROOT, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout)
    assert (result["popularity"]["head"]["group_accuracy"], result["popularity"]["tail"]["group_accuracy"]) == (
        0.75, 0.375)
    assert set(result["breakdowns"]["category"]) == DOMAINS
    assert all("group_accuracy" in v for v in result["breakdowns"]["category"].values())
    assert result["warnings"] == []
