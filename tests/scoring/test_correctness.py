"""Per-item correctness (docs/METRICS.md): the bits the scorer keeps agree with the counts it publishes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scoring import evaluate, load_labels, read_predictions
from scoring.correctness import item_correctness, pack_bits, unpack_bits

ITEMS = [{"id": f"q{i}", "label": ["true", "false"][i % 2], "category": "abc"[i % 3]} for i in range(21)]


def _labels() -> bytes:
    return ("\n".join(json.dumps(item) for item in ITEMS) + "\n").encode()


def test_correctness_counts_are_the_results_counts_and_follow_label_order() -> None:
    labels = load_labels(_labels())
    rng = np.random.default_rng(3)
    answers = rng.choice(["true", "false", ""], size=len(ITEMS))
    rows = [f"{item['id']},{answer}" for item, answer in zip(ITEMS, answers, strict=True)]
    rows.reverse()  # the file's order is not the label order
    predictions = read_predictions(("id,prediction\n" + "\n".join(rows) + "\n").encode(), labels)
    result = evaluate(labels, predictions)
    facts = item_correctness(labels, predictions)
    assert int(facts.correct.sum()) == result["overall"]["correct"]
    assert int(facts.answered.sum()) == result["overall"]["answered"]
    expected = [answer != "" and answer == item["label"] for item, answer in zip(ITEMS, answers, strict=True)]
    assert facts.correct.tolist() == expected
    assert not (facts.correct & ~facts.answered).any()  # an abstention is never correct


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 2000])
def test_bits_round_trip_in_a_quarter_of_the_items(n: int) -> None:
    flags = np.random.default_rng(n).random(n) < 0.5
    packed = pack_bits(flags)
    assert len(packed) == (n + 7) // 8
    assert unpack_bits(packed, n).tolist() == flags.tolist()


def test_too_few_bits_are_refused() -> None:
    with pytest.raises(ValueError, match="fewer than 9"):
        unpack_bits(b"\xff", 9)
