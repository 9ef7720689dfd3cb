"""ComparisonQA's own macro-F1 figures (``macro_f1_fixed``, ``avg_macro_f1``) equal its evaluation script's.

The paper's script (HKUST-KnowComp/ComparisonQA, ``evaluation/evaluate_answer.py`` at
2b2abcc) maps the letters A-D to 0-3 and a prediction it could not extract to 4, then
per side (the high-frequency question and the low-frequency question of every record)
calls ``f1_score(gold, pred, labels=[0, 1, 2, 3], average="macro")`` and prints
"avg Macro F1" = (high + low) / 2 and "difference Macro F1" = high - low. ``paper_script``
below does the same over given predictions (the extraction from model text is left out:
a Tailboard file already holds letters, and an abstention is the script's ``None``).
Tailboard's ``macro_f1`` averages over the classes seen and pools both sides instead.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_support import import_phase, jsonl, ranked_value, released, score_csv
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import f1_score

from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.metrics import SliceCounts, point_values, resolve_path
from scoring.metrics.registry import UnknownMetricError
from scoring.producible import Producible, check_paths
from scoring.types import ABSTAIN, HEAD, TAIL, LabelFileError, PhaseConfig, Predictions

LETTERS = "ABCD"
LABEL_DIC: dict[str | None, int] = {"A": 0, "B": 1, "C": 2, "D": 3, None: 4}
OUTSIDE = 99  # an abstention, outside every label list


def paper_script(records: list[dict[str, Any]], answers: dict[str, str | None]) -> dict[str, float]:
    """Return the figures ComparisonQA's evaluate_answer.py prints, for records and predicted letters."""
    high_gold, low_gold, high_pred, low_pred = [], [], [], []
    high_correct = low_correct = 0
    for line in records:
        high_predict = answers.get(f"{line['question_id']}-high")
        low_predict = answers.get(f"{line['question_id']}-low")
        high_answer = list(line["high_question"]["answer"].keys())[0]
        low_answer = list(line["low_question"]["answer"].keys())[0]
        high_gold.append(LABEL_DIC[high_answer])
        low_gold.append(LABEL_DIC[low_answer])
        high_pred.append(LABEL_DIC[high_predict])
        low_pred.append(LABEL_DIC[low_predict])
        high_correct += high_predict == high_answer
        low_correct += low_predict == low_answer
    num = len(records)
    with warnings.catch_warnings():  # the script's default zero_division warns, then counts 0
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        high_f1 = f1_score(high_gold, high_pred, labels=[0, 1, 2, 3], average="macro")
        low_f1 = f1_score(low_gold, low_pred, labels=[0, 1, 2, 3], average="macro")
    return {"high_acc": high_correct / num, "low_acc": low_correct / num, "high_f1": high_f1, "low_f1": low_f1,
            "avg_f1": (high_f1 + low_f1) / 2, "diff_f1": high_f1 - low_f1}


def question(letter: str) -> dict[str, Any]:
    return {"question": "Which?", "options": {x: f"option {x}" for x in LETTERS}, "answer": {letter: "option"}}


def records_of(seed: int, n: int) -> list[dict[str, Any]]:
    """Return n records in the release's format, each one high/low pair."""
    rnd = random.Random(seed)
    return [{"question_id": f"T_{i}", "hypernym": rnd.choice(["Character", "Part", "Place"]),
             "high_entity": f"http://dbpedia.org/resource/H{i}", "low_entity": f"http://dbpedia.org/resource/L{i}",
             "high_relationshipCount": str(rnd.randint(186, 900)),
             "low_relationshipCount": str(rnd.randint(0, 106)),
             "high_question": question(rnd.choice(LETTERS)), "low_question": question(rnd.choice(LETTERS))}
            for i in range(n)]


def answers_of(records: list[dict[str, Any]], seed: int) -> dict[str, str | None]:
    """Return predicted letters: right about half the time, None (abstain) sometimes."""
    rnd = random.Random(seed)
    out: dict[str, str | None] = {}
    for r in records:
        for side in ("high", "low"):
            gold = next(iter(r[f"{side}_question"]["answer"]))
            roll = rnd.random()
            out[f"{r['question_id']}-{side}"] = None if roll < 0.1 else gold if roll < 0.55 else rnd.choice(LETTERS)
    return out


def platform(records: list[dict[str, Any]], answers: dict[str, str | None], tmp_path: Path) -> dict[str, Any]:
    """Import the records, upload the answers as a CSV (None as an empty cell) and return the result."""
    source = tmp_path / "comparisonqa.json"
    source.write_text(json.dumps(records), encoding="utf-8")
    phase = import_phase("comparisonqa", source, tmp_path / "phase")
    return score_csv(phase.labels, {i: a or "" for i, a in answers.items()})


@pytest.mark.parametrize(("seed", "n"), [(1, 1), (2, 3), (3, 10), (4, 60), (5, 400)])
def test_platform_figures_equal_the_papers_evaluation_script(tmp_path: Path, seed: int, n: int) -> None:
    records = records_of(seed, n)
    answers = answers_of(records, seed + 50)
    result = platform(records, answers, tmp_path)
    paper = paper_script(records, answers)
    head, tail = result["popularity"]["head"], result["popularity"]["tail"]
    assert result["pairs"]["n_pairs"] == n
    assert head["accuracy"] == pytest.approx(paper["high_acc"], abs=1e-12)
    assert tail["accuracy"] == pytest.approx(paper["low_acc"], abs=1e-12)
    assert head["macro_f1_fixed"] == pytest.approx(paper["high_f1"], abs=1e-12)
    assert tail["macro_f1_fixed"] == pytest.approx(paper["low_f1"], abs=1e-12)
    assert result["overall"]["avg_macro_f1"] == pytest.approx(paper["avg_f1"], abs=1e-12)
    assert result["popularity"]["gap"]["macro_f1_fixed"] == pytest.approx(paper["diff_f1"], abs=1e-12)


def test_the_two_released_example_records_score_as_the_papers_script_does(tmp_path: Path) -> None:
    source = released("comparisonqa", "comparisonqa_test_example.json")
    records = json.loads(source.read_text("utf-8"))
    phase = import_phase("comparisonqa", source, tmp_path / "phase")
    gold = {r["id"]: r["label"] for r in jsonl(phase.outdir / "labels.jsonl")}
    answers: dict[str, str | None] = {i: g if i.endswith("-high") else "A" for i, g in gold.items()}
    result = score_csv(phase.labels, {i: a or "" for i, a in answers.items()})
    paper = paper_script(records, answers)
    # high: both D, answered right (one class of four); low: B and A, both answered A (A: 2/3)
    assert (paper["high_f1"], paper["low_f1"]) == pytest.approx((1 / 4, 2 / 3 / 4))
    assert result["popularity"]["head"]["macro_f1_fixed"] == pytest.approx(paper["high_f1"])
    assert result["popularity"]["tail"]["macro_f1_fixed"] == pytest.approx(paper["low_f1"])
    assert result["overall"]["avg_macro_f1"] == pytest.approx(paper["avg_f1"]) == (1 / 4 + 1 / 6) / 2
    assert result["popularity"]["head"]["macro_f1"] == 1.0  # over the classes seen: D only
    assert result["overall"]["macro_f1"] == pytest.approx((1 + 0 + 2 / 3) / 3)  # pooled, over D, B and A


def mc_labels(gold: list[int], *, pairs: list[int] | None = None, popularity: list[int] | None = None,
              k: int = 4) -> LabelSet:
    n = len(gold)
    return LabelSet(config=PhaseConfig(task_type="multiple_choice", options=tuple(LETTERS[:k]), breakdowns=()),
                    ids=pa.array([f"q{i}" for i in range(n)]), gold=np.array(gold, dtype=np.int8),
                    pairs=np.array(pairs if pairs is not None else [], dtype=np.int32),
                    popularity=np.array(popularity if popularity is not None else [], dtype=np.int8))


def scored(labels: LabelSet, answer: list[int]) -> dict[str, Any]:
    return evaluate(labels, Predictions(answer=np.array(answer, dtype=np.int8), confidence=None,
                                        n_predictions=len(answer)))


def test_one_pair_both_right_is_1_by_macro_f1_and_a_quarter_by_the_papers_definition() -> None:
    """The largest gap the issue names: 0.75 on the smallest set, one pair answered right."""
    labels = mc_labels([0, 1], pairs=[0, 0], popularity=[HEAD, TAIL])
    overall = scored(labels, [0, 1])["overall"]
    assert overall["macro_f1"] == 1.0 and overall["accuracy"] == 1.0
    assert overall["macro_f1_fixed"] == 0.5  # A and B right, C and D never seen: 0
    assert overall["avg_macro_f1"] == 0.25  # each side: one class of four
    assert overall["macro_f1"] - overall["avg_macro_f1"] == 0.75


def test_small_sets_where_the_definitions_part_ways() -> None:
    # 3 pairs, every answer right, the head side all A, the tail side B, C, D
    labels = mc_labels([0, 1, 0, 2, 0, 3], pairs=[0, 0, 1, 1, 2, 2], popularity=[HEAD, TAIL] * 3)
    result = scored(labels, [0, 1, 0, 2, 0, 3])
    assert result["overall"]["macro_f1"] == 1.0 == result["overall"]["macro_f1_fixed"]
    assert result["overall"]["avg_macro_f1"] == pytest.approx((1 / 4 + 3 / 4) / 2)
    assert result["popularity"]["head"]["macro_f1"] == 1.0
    assert result["popularity"]["head"]["macro_f1_fixed"] == 0.25
    # abstaining on every tail item: the script's None is outside the labels, a miss
    result = scored(labels, [0, ABSTAIN, 0, ABSTAIN, 0, ABSTAIN])
    assert result["popularity"]["tail"]["macro_f1_fixed"] == 0.0
    assert result["overall"]["avg_macro_f1"] == pytest.approx(0.125)


@st.composite
def multiple_choice_items(draw: st.DrawFn) -> tuple[int, list[int], list[int]]:
    k = draw(st.integers(3, 6))
    n = draw(st.integers(1, 30))
    gold = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    answer = draw(st.lists(st.integers(-1, k - 1), min_size=n, max_size=n))
    return k, gold, answer


def cells_of(gold: list[int], answer: list[int], k: int) -> np.ndarray:
    table = np.zeros((k, k + 1), dtype=np.int64)
    for g, a in zip(gold, answer, strict=True):
        table[g, a + 1] += 1
    return table


@settings(max_examples=300, deadline=None)
@given(multiple_choice_items())
def test_macro_f1_fixed_equals_sklearn_over_every_option_with_zero_division_0(
        drawn: tuple[int, list[int], list[int]]) -> None:
    k, gold, answer = drawn
    values = point_values(SliceCounts(cells_of(gold, answer, k), binary=False))
    mapped = [OUTSIDE if a == ABSTAIN else a for a in answer]
    expected = f1_score(gold, mapped, labels=list(range(k)), average="macro", zero_division=0)
    assert values["macro_f1_fixed"] == pytest.approx(expected, abs=1e-12)
    assert values["macro_f1_fixed"] <= values["macro_f1"] + 1e-12  # same classes' F1, more of them at 0


def test_yes_no_tasks_have_neither_paper_metric() -> None:
    labels = LabelSet(config=PhaseConfig(task_type="binary", breakdowns=()), ids=pa.array(["a", "b"]),
                      gold=np.array([1, 0], dtype=np.int8), pairs=np.array([0, 0], dtype=np.int32),
                      popularity=np.array([HEAD, TAIL], dtype=np.int8))
    overall = scored(labels, [1, 0])["overall"]
    assert "macro_f1_fixed" not in overall and "avg_macro_f1" not in overall
    with pytest.raises(LabelFileError, match="avg_macro_f1"):
        check_paths(labels, ["avg_macro_f1"])
    with pytest.raises(LabelFileError, match="macro_f1_fixed"):
        check_paths(labels, ["popularity.head.macro_f1_fixed"])


def test_avg_macro_f1_needs_a_complete_pair_and_is_an_overall_path_only() -> None:
    unpaired = mc_labels([0, 1, 2], pairs=[0, 0, 0], popularity=[HEAD, TAIL, TAIL])  # three items: no pair
    assert "avg_macro_f1" not in scored(unpaired, [0, 1, 2])["overall"]
    assert not Producible(unpaired).metric("avg_macro_f1") and Producible(unpaired).metric("macro_f1_fixed")
    paired = mc_labels([0, 1, 2], pairs=[0, 0, -1], popularity=[HEAD, TAIL, TAIL])
    check_paths(paired, ["avg_macro_f1", "popularity.gap.macro_f1_fixed", "popularity.tail.macro_f1_fixed"])
    assert resolve_path("avg_macro_f1").higher_is_better
    for path in ("popularity.head.avg_macro_f1", "popularity.gap.avg_macro_f1", "breakdowns.category.x.avg_macro_f1"):
        with pytest.raises(UnknownMetricError):
            resolve_path(path)
    result = scored(paired, [0, 1, 2])
    assert "avg_macro_f1" not in result["popularity"]["head"] and "avg_macro_f1" not in result["popularity"]["gap"]


def test_avg_macro_f1_counts_complete_pairs_only() -> None:
    # pair 1 lacks its tail item, item 4 has no pair: the paper's records are whole pairs
    labels = mc_labels([0, 0, 1, 2, 3], pairs=[0, 0, 1, -1, -1], popularity=[HEAD, TAIL, HEAD, TAIL, HEAD])
    whole = mc_labels([0, 0], pairs=[0, 0], popularity=[HEAD, TAIL])
    assert scored(labels, [0, 0, 1, 2, 3])["overall"]["avg_macro_f1"] == scored(whole, [0, 0])["overall"][
        "avg_macro_f1"] == 0.25


def _paired_scenario(seed: int, n_pairs: int, together: bool) -> tuple[LabelSet, list[int]]:
    """Pairs whose head and tail are both right or both wrong (together), or independently so."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 4, 2 * n_pairs)
    right = rng.random(2 * n_pairs) < 0.6
    if together:
        right[1::2] = right[0::2]
    answer = np.where(right, gold, (gold + 1 + rng.integers(0, 3, 2 * n_pairs)) % 4)
    labels = mc_labels(gold.tolist(), pairs=(np.arange(2 * n_pairs) // 2).tolist(),
                       popularity=[HEAD, TAIL] * n_pairs)
    return labels, answer.tolist()


def _naive_pair_interval(labels: LabelSet, answer: list[int], seed: int) -> list[float]:
    """Resample pairs one by one (the textbook pair bootstrap) with an unrelated generator, scored by sklearn."""
    rng = np.random.default_rng(seed)
    n_pairs = labels.n // 2
    gold = labels.gold.astype(int)
    mapped = np.array([OUTSIDE if a == ABSTAIN else a for a in answer])
    values = []
    for _ in range(1000):
        pick = rng.integers(0, n_pairs, n_pairs)
        head, tail = (f1_score(gold[2 * pick + side], mapped[2 * pick + side], labels=[0, 1, 2, 3],
                               average="macro", zero_division=0) for side in (0, 1))
        values.append((head + tail) / 2)
    return list(np.percentile(values, [2.5, 97.5]))


@pytest.mark.parametrize("together", [True, False])
def test_avg_macro_f1_interval_resamples_whole_pairs(together: bool) -> None:
    labels, answer = _paired_scenario(7, 150, together)
    overall = scored(labels, answer)["overall"]
    lo, hi = overall["ci"]["avg_macro_f1"]
    naive_lo, naive_hi = _naive_pair_interval(labels, answer, 8)
    assert lo <= overall["avg_macro_f1"] <= hi
    assert hi - lo == pytest.approx(naive_hi - naive_lo, rel=0.15)
    assert (lo + hi) / 2 == pytest.approx((naive_lo + naive_hi) / 2, abs=0.15 * (naive_hi - naive_lo))


def test_avg_macro_f1_interval_is_the_same_for_the_same_pairs() -> None:
    labels, answer = _paired_scenario(3, 40, True)
    first = scored(labels, answer)["overall"]["ci"]["avg_macro_f1"]
    scored(*_paired_scenario(4, 25, False))  # another file scored in between
    assert scored(labels, answer)["overall"]["ci"]["avg_macro_f1"] == first


def test_a_phase_can_rank_by_the_papers_figures_and_show_them_as_columns(tmp_path: Path) -> None:
    records = records_of(9, 30)
    source = tmp_path / "comparisonqa.json"
    source.write_text(json.dumps(records), encoding="utf-8")
    run = import_phase("comparisonqa", source, tmp_path / "phase")
    config = json.loads((tmp_path / "phase" / "phase.json").read_text())
    config.update(primary_metric="avg_macro_f1",
                  views=[{"name": "Paper", "metric": "avg_macro_f1",
                          "columns": ["popularity.head.macro_f1_fixed", "popularity.gap.macro_f1_fixed",
                                      "breakdowns.category.Part.macro_f1_fixed"]}])
    labels = load_labels(tmp_path / "phase" / "labels.jsonl", config)
    assert labels.config.primary_metric == "avg_macro_f1"
    answers = answers_of(records, 10)
    result = score_csv(labels, {i: a or "" for i, a in answers.items()})
    assert ranked_value(result, "avg_macro_f1") == pytest.approx(paper_script(records, answers)["avg_f1"])
    assert ranked_value(result, "breakdowns.category.Part.macro_f1_fixed") is not None
    assert run.labels.n == 60


def test_a_yes_no_phase_naming_them_is_refused_when_it_loads(tmp_path: Path) -> None:
    labels_file = tmp_path / "labels.jsonl"
    labels_file.write_text('{"id": "a", "label": true, "pair": "p", "popularity": "head"}\n'
                           '{"id": "b", "label": false, "pair": "p", "popularity": "tail"}\n')
    for metric in ("avg_macro_f1", "macro_f1_fixed"):
        with pytest.raises(LabelFileError, match=f"cannot produce the metric path.*{metric}"):
            load_labels(labels_file, {"task_type": "binary", "primary_metric": metric})
