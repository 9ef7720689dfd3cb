"""Slices of docs/METRICS.md: breakdowns, popularity with gap and drop, pairs, groups, splits, result shape."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.types import ABSTAIN, Predictions

WRONG = "wrong"


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def score(
    records: list[dict[str, Any]],
    answers: dict[str, bool | str | None],
    config: dict[str, Any] | None = None,
    confidence: dict[str, float] | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Evaluate binary items; answers map id -> True (right), False/WRONG (wrong) or None (abstain)."""
    labels = load_labels(jsonl(*records), config or {"task_type": "binary"})
    answer = np.full(labels.n, ABSTAIN, dtype=np.int8)
    for i, item_id in enumerate(labels.ids.to_pylist()):
        verdict = answers.get(item_id)
        if verdict is not None:
            answer[i] = labels.gold[i] if verdict is True else 1 - labels.gold[i]
    conf = None
    if confidence is not None:
        conf = np.array([confidence.get(i, np.nan) for i in labels.ids.to_pylist()])
    predictions = Predictions(answer=answer, confidence=conf, n_predictions=labels.n, warnings=warnings or [])
    return evaluate(labels, predictions)


def item(item_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": item_id, "label": True, **fields}


def test_result_keys_in_spec_order_and_absent_data_omitted() -> None:
    result = score([item("a"), item("b")], {"a": True})
    assert list(result) == ["n_items", "overall", "warnings"]
    full = score(
        [item("a", category="x", popularity="head", pair="p", split="private"), item("b", popularity="tail", pair="p")],
        {"a": True},
    )
    assert list(full) == ["n_items", "overall", "breakdowns", "popularity", "pairs", "splits", "warnings"]


def test_slice_object_lists_metrics_counts_and_intervals() -> None:
    overall = score([item("a", group="g"), item("b")], {"a": True}, confidence={"a": 0.8})["overall"]
    assert list(overall) == [
        "accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "group_accuracy", "ece", "aurc",
        "n", "answered", "correct", "ci",
    ]
    assert list(overall["ci"]) == ["accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "group_accuracy"]
    assert (overall["n"], overall["answered"], overall["correct"]) == (2, 1, 1)


def test_list_category_counts_in_each_value_and_items_without_field_are_left_out() -> None:
    records = [item("a", category=["x", "y"]), item("b", category="y"), item("c")]
    table = score(records, {"a": True, "b": WRONG})["breakdowns"]["category"]
    assert list(table) == ["x", "y"]
    assert (table["x"]["n"], table["x"]["correct"]) == (1, 1)
    assert (table["y"]["n"], table["y"]["correct"]) == (2, 1)


def test_breakdown_values_are_sorted_and_only_configured_fields_shown() -> None:
    records = [item("a", category="zeta", domain="d"), item("b", category="Alpha", domain="e")]
    result = score(records, {}, {"task_type": "binary", "breakdowns": ["domain"]})
    assert list(result["breakdowns"]) == ["domain"]
    assert list(score(records, {})["breakdowns"]["category"]) == ["Alpha", "zeta"]


def test_popularity_buckets_in_head_torso_tail_order_with_gap_and_relative_drop() -> None:
    records = [item("h1", popularity="head"), item("h2", popularity="head"), item("t1", popularity="tail"),
               item("t2", popularity="tail"), item("m", popularity="torso")]
    pop = score(records, {"h1": True, "h2": True, "t1": True, "t2": WRONG})["popularity"]
    assert list(pop) == ["head", "torso", "tail", "gap", "relative_drop"]
    assert pop["gap"]["accuracy"] == pytest.approx(0.5)
    assert pop["relative_drop"]["accuracy"] == pytest.approx(0.5)
    assert set(pop["gap"]) == {"accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1"}


def test_relative_drop_is_null_when_head_is_zero_and_null_metrics_are_left_out() -> None:
    records = [item("h", popularity="head"), item("t", popularity="tail")]
    pop = score(records, {"t": True})["popularity"]  # head abstains: selective_accuracy null
    assert pop["relative_drop"]["accuracy"] is None
    assert pop["gap"]["accuracy"] == -1.0
    assert "selective_accuracy" not in pop["gap"] and "selective_accuracy" not in pop["relative_drop"]


def test_gap_is_empty_without_a_tail_bucket() -> None:
    pop = score([item("h", popularity="head"), item("x")], {"h": True})["popularity"]
    assert list(pop) == ["head", "gap", "relative_drop"]
    assert pop["gap"] == {} and pop["relative_drop"] == {}


def test_pairs_count_complete_head_tail_pairs_and_the_rest_as_incomplete() -> None:
    records = [
        item("1h", pair="p1", popularity="head"), item("1t", pair="p1", popularity="tail"),  # both right
        item("2h", pair="p2", popularity="head"), item("2t", pair="p2", popularity="tail"),  # head only
        item("3h", pair="p3", popularity="head"), item("3t", pair="p3", popularity="tail"),  # neither
        item("4a", pair="p4", popularity="head"), item("4b", pair="p4", popularity="head"),  # two heads
        item("5a", pair="p5", popularity="tail"),  # alone
        item("6a", pair="p6", popularity="head"), item("6b", pair="p6", popularity="tail"), item("6c", pair="p6"),
    ]
    answers = {"1h": True, "1t": True, "2h": True, "2t": WRONG, "3t": None}
    pairs = score(records, answers)["pairs"]
    assert pairs == {"n_pairs": 3, "both_correct": 1 / 3, "head_only": 1 / 3, "tail_only": 0.0, "neither": 1 / 3,
                     "incomplete_pairs": 3}


def test_pair_shares_are_null_without_complete_pairs() -> None:
    pairs = score([item("a", pair="p", popularity="head")], {})["pairs"]
    assert pairs == {"n_pairs": 0, "both_correct": None, "head_only": None, "tail_only": None, "neither": None,
                     "incomplete_pairs": 1}


def test_group_accuracy_only_where_groups_occur_and_counts_slice_members_only() -> None:
    records = [
        item("a", group="g1", category=["x", "y"]), item("b", group="g1", category="y"),
        item("c", group="g2", category="x"), item("d", category="z"),
    ]
    result = score(records, {"a": True, "b": WRONG, "c": True, "d": WRONG})
    assert result["overall"]["group_accuracy"] == pytest.approx(0.5)
    table = result["breakdowns"]["category"]
    assert table["x"]["group_accuracy"] == 1.0  # g1 in x is only item a, which is right
    assert table["y"]["group_accuracy"] == 0.0
    assert "group_accuracy" not in table["z"] and "group_accuracy" not in table["z"]["ci"]


def test_ece_only_with_confidence_and_null_without_answers() -> None:
    assert "ece" not in score([item("a")], {"a": True})["overall"]
    result = score([item("a", category="x"), item("b", category="y")], {"a": True}, confidence={"a": 0.75})
    assert result["overall"]["ece"] == pytest.approx(0.25)
    assert result["breakdowns"]["category"]["y"]["ece"] is None


def test_splits_hold_the_whole_object_per_split_with_file_wide_popularity_cuts() -> None:
    records = [item(str(v), popularity=v, split="private" if v >= 5 else "public") for v in range(1, 10)]
    result = score(records, {str(v): True for v in range(1, 10)})
    assert list(result["splits"]) == ["public", "private"]
    public, private = result["splits"]["public"], result["splits"]["private"]
    assert list(public) == ["n_items", "overall", "popularity", "popularity_curve"]
    assert (public["n_items"], private["n_items"]) == (4, 5)
    # file tertiles: 1..3 tail, 4..6 torso, 7..9 head, whatever the split
    assert {k: v["n"] for k, v in public["popularity"].items() if "n" in v} == {"torso": 1, "tail": 3}
    assert {k: v["n"] for k, v in private["popularity"].items() if "n" in v} == {"head": 3, "torso": 2}


def test_only_splits_with_items_are_listed() -> None:
    result = score([item("a", split="public"), item("b")], {"a": True})
    assert list(result["splits"]) == ["public"]


def test_warnings_copy_prediction_warnings_at_top_level_only() -> None:
    result = score([item("a", split="private")], {}, warnings=["3 ids missing"])
    assert result["warnings"] == ["3 ids missing"]
    assert "warnings" not in result["splits"]["private"]


def test_same_inputs_give_identical_bytes() -> None:
    records = [item(f"q{i}", category=["x", "y"][i % 2], popularity=i, group=f"g{i % 3}") for i in range(30)]
    answers: dict[str, bool | str | None] = {f"q{i}": [True, WRONG, None][i % 3] for i in range(30)}
    first = json.dumps(score(records, answers))
    assert json.dumps(score(records, answers)) == first


def test_predictions_must_match_the_label_set() -> None:
    labels = load_labels(jsonl(item("a"), item("b")))
    with pytest.raises(ValueError):
        evaluate(labels, Predictions(answer=np.zeros(3, np.int8), confidence=None, n_predictions=3))
    with pytest.raises(ValueError):
        evaluate(labels, Predictions(answer=np.array([0, 2], np.int8), confidence=None, n_predictions=2))


def test_hand_built_label_set_scores_overall_only() -> None:
    labels = load_labels(jsonl(item("a"), item("b")))
    bare = LabelSet(config=labels.config, ids=labels.ids, gold=labels.gold)
    result = evaluate(bare, Predictions(answer=np.array([1, -1], np.int8), confidence=None, n_predictions=2))
    assert list(result) == ["n_items", "overall", "warnings"]
    assert result["overall"]["accuracy"] == 0.5


def test_warns_when_the_phase_ranks_by_ece_and_the_file_has_no_confidence() -> None:
    result = score([item("a")], {"a": True}, {"task_type": "binary", "primary_metric": "ece"})
    assert result["warnings"] == ["the phase ranks by ece, which needs a confidence column; this file has none"]
