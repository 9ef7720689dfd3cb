"""Every metric equals scikit-learn or a direct count, and ignores item order and duplication."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score

from scoring.evaluate import evaluate
from scoring.labels import LabelSet
from scoring.metrics import METRICS, SliceCounts, get_metric, point_values
from scoring.types import ABSTAIN, HEAD, TAIL, PhaseConfig, Predictions

SENTINEL = 99  # an abstention, mapped outside every label list as docs/METRICS.md says


def cells_of(gold: list[int], answer: list[int], k: int) -> np.ndarray:
    """Return the (K, K + 1) cells table of items, counted one by one."""
    table = np.zeros((k, k + 1), dtype=np.int64)
    for g, a in zip(gold, answer, strict=False):
        table[g, a + 1] += 1
    return table


@st.composite
def scored_items(draw: st.DrawFn, min_size: int = 0) -> tuple[int, list[int], list[int]]:
    """Draw (K, gold classes, answers with abstentions) of up to 40 items."""
    k = draw(st.integers(2, 5))
    n = draw(st.integers(min_size, 40))
    gold = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    answer = draw(st.lists(st.integers(-1, k - 1), min_size=n, max_size=n))
    return k, gold, answer


def mapped(answer: list[int]) -> list[int]:
    return [SENTINEL if a == ABSTAIN else a for a in answer]


@settings(max_examples=300, deadline=None)
@given(scored_items())
def test_accuracy_answer_rate_selective_accuracy_equal_counts_and_sklearn(
        drawn: tuple[int, list[int], list[int]]) -> None:
    k, gold, answer = drawn
    values = point_values(SliceCounts(cells_of(gold, answer, k), binary=k == 2))
    n = len(gold)
    answered = sum(a != ABSTAIN for a in answer)
    correct = sum(a == g for g, a in zip(gold, answer, strict=False))
    if n == 0:
        assert values["accuracy"] is None and values["answer_rate"] is None
    else:
        assert values["accuracy"] == pytest.approx(accuracy_score(gold, mapped(answer)), abs=1e-12)
        assert values["accuracy"] == pytest.approx(correct / n, abs=1e-12)
        assert values["answer_rate"] == pytest.approx(answered / n, abs=1e-12)
    if answered == 0:
        assert values["selective_accuracy"] is None
    else:
        assert values["selective_accuracy"] == pytest.approx(correct / answered, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(scored_items(min_size=1))
def test_macro_f1_equals_sklearn_with_abstentions_outside_labels(drawn: tuple[int, list[int], list[int]]) -> None:
    k, gold, answer = drawn
    values = point_values(SliceCounts(cells_of(gold, answer, k), binary=k == 2))
    labels = sorted(set(gold) | {a for a in answer if a != ABSTAIN})
    expected = f1_score(gold, mapped(answer), labels=labels, average="macro", zero_division=0)
    assert values["macro_f1"] == pytest.approx(expected, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(scored_items(min_size=1))
def test_binary_f1_is_positive_class_f1_with_abstention_as_false_negative(
        drawn: tuple[int, list[int], list[int]]) -> None:
    _, gold, answer = drawn
    gold = [g % 2 for g in gold]
    answer = [a if a == ABSTAIN else a % 2 for a in answer]
    values = point_values(SliceCounts(cells_of(gold, answer, 2), binary=True))
    expected = f1_score(gold, mapped(answer), labels=[1], average="macro", zero_division=0)
    assert values["f1"] == pytest.approx(expected, abs=1e-12)
    tp = sum(g == 1 and a == 1 for g, a in zip(gold, answer, strict=False))
    fp = sum(g == 0 and a == 1 for g, a in zip(gold, answer, strict=False))
    fn = sum(g == 1 and a != 1 for g, a in zip(gold, answer, strict=False))
    assert values["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(scored_items(min_size=1))
def test_multiple_choice_f1_equals_macro_f1(drawn: tuple[int, list[int], list[int]]) -> None:
    k, gold, answer = drawn
    values = point_values(SliceCounts(cells_of(gold, answer, k), binary=False))
    assert values["f1"] == values["macro_f1"]


def test_f1_is_zero_when_no_positive_item_and_no_positive_answer() -> None:
    values = point_values(SliceCounts(cells_of([0, 0], [0, ABSTAIN], 2), binary=True))
    assert values["f1"] == 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=1, max_size=40))
def test_group_accuracy_is_share_of_groups_with_every_item_right(items: list[tuple[int, bool]]) -> None:
    groups: dict[int, bool] = {}
    for group, right in items:
        groups[group] = groups.get(group, True) and right
    table = np.array([sum(not ok for ok in groups.values()), sum(groups.values())])
    counts = SliceCounts(np.zeros((2, 3), dtype=np.int64), binary=True, groups=table)
    assert point_values(counts)["group_accuracy"] == pytest.approx(sum(groups.values()) / len(groups))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), max_size=40))
def test_ece_equals_binned_calibration_gap(items: list[tuple[float, bool]]) -> None:
    table = np.zeros((10, 3))
    for conf, right in items:
        b = min(math.floor(10 * conf), 9)
        table[b] += (1, right, conf)
    counts = SliceCounts(np.zeros((2, 3), dtype=np.int64), binary=True, calibration=table)
    value = point_values(counts)["ece"]
    if not items:
        assert value is None
        return
    expected = 0.0
    for b in range(10):
        members = [(c, r) for c, r in items if min(math.floor(10 * c), 9) == b]
        if members:
            acc = sum(r for _, r in members) / len(members)
            conf = sum(c for c, _ in members) / len(members)
            expected += len(members) / len(items) * abs(acc - conf)
    assert value == pytest.approx(expected, abs=1e-9)


def test_get_metric_error_names_valid_metrics() -> None:
    with pytest.raises(KeyError, match="valid metrics: accuracy, answer_rate"):
        get_metric("acc")


def test_registry_records_direction() -> None:
    assert METRICS["accuracy"].higher_is_better is True
    assert METRICS["ece"].higher_is_better is False


# Invariance, for every metric of the registry (sklearn's test_common habit).

RNG_SEEDS = range(5)


def _scenario(seed: int) -> tuple[LabelSet, Predictions]:
    rng = np.random.default_rng(seed)
    n = 60
    gold = rng.integers(0, 3, n).astype(np.int8)
    answer = np.where(rng.random(n) < 0.2, ABSTAIN, np.where(rng.random(n) < 0.6, gold, rng.integers(0, 3, n)))
    confidence = np.where(answer == ABSTAIN, np.nan, rng.random(n))
    labels = LabelSet(
        config=PhaseConfig(task_type="multiple_choice", options=("A", "B", "C"), breakdowns=()),
        ids=pa.array([f"q{i}" for i in range(n)]),
        gold=gold,
        groups=rng.integers(0, 12, n).astype(np.int32),
        pairs=(np.arange(n) // 2).astype(np.int32),  # items 2i (head) and 2i + 1 (tail): pair i
        popularity=np.where(np.arange(n) % 2 == 0, HEAD, TAIL).astype(np.int8),
    )
    return labels, Predictions(answer=answer.astype(np.int8), confidence=confidence, n_predictions=n)


def _reindexed(labels: LabelSet, predictions: Predictions, order: np.ndarray) -> tuple[LabelSet, Predictions]:
    ids = pa.array([f"r{i}" for i in range(len(order))])
    copy = np.array([int((order[:i] == item).sum()) for i, item in enumerate(order)])  # the item's n-th copy
    pairs = labels.pairs[order] + copy * (int(labels.pairs.max()) + 1)  # a copied pair is a pair of its own
    new_labels = LabelSet(config=labels.config, ids=ids, gold=labels.gold[order], groups=labels.groups[order],
                          pairs=pairs.astype(np.int32), popularity=labels.popularity[order])
    assert predictions.confidence is not None
    new_predictions = Predictions(
        answer=predictions.answer[order], confidence=predictions.confidence[order], n_predictions=len(order)
    )
    return new_labels, new_predictions


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_metric_ignores_item_order(name: str, seed: int) -> None:
    labels, predictions = _scenario(seed)
    order = np.random.default_rng(seed + 100).permutation(labels.n)
    before = evaluate(labels, predictions)["overall"][name]
    after = evaluate(*_reindexed(labels, predictions, order))["overall"][name]
    assert after == pytest.approx(before, abs=1e-12)


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_metric_unchanged_when_every_item_is_duplicated(name: str, seed: int) -> None:
    labels, predictions = _scenario(seed)
    order = np.repeat(np.arange(labels.n), 2)
    before = evaluate(labels, predictions)["overall"][name]
    after = evaluate(*_reindexed(labels, predictions, order))["overall"][name]
    assert after == pytest.approx(before, abs=1e-12)
