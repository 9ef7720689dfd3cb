"""Coarse figures draw their dither from the submission's own answers: equal counts are no equality oracle (issue 17).

A figure drawn from the slice's exact counts makes two uploads with equal counts show
equal figures, so a swap of two items that leaves a row unchanged tells that their labels
are equal. Drawn from the file's answers, a changed file reads its rows afresh whether
their counts moved or not; the twin tests turn ``FRESH_DRAWS`` off and show the oracle.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from leaderboard.board.cells import read_path
from leaderboard.disclosure import policy, visible_results
from leaderboard.disclosure.precision import GRIDS, Dither, draw_of_predictions, on_grid
from scoring.types import Predictions

PAIRS = 600


def _slice(n: int, correct: int) -> dict[str, Any]:
    accuracy = correct / n
    return {"n": n, "answered": n, "correct": correct, "accuracy": accuracy, "answer_rate": 1.0,
            "selective_accuracy": accuracy, "f1": accuracy * 0.9, "macro_f1": accuracy * 0.95,
            "ci": {"accuracy": [max(0.0, accuracy - 0.09), min(1.0, accuracy + 0.09)]}}


def _results(category_correct: int, *, draw: str | None) -> dict[str, Any]:
    results: dict[str, Any] = {
        "n_items": 1200, "overall": _slice(1200, 700),
        "breakdowns": {"category": {"a": _slice(111, category_correct)}},
        "popularity": {"head": _slice(100, 70), "tail": _slice(1100, 630)}, "warnings": [],
    }
    if draw is not None:
        results["draw"] = {"answers": draw, "confidences": draw}
    return results


def _phase(**config: Any) -> Any:
    task = {"task_type": "binary", **config}
    return SimpleNamespace(id=3, labels_sha256="cd" * 32, has_private_split=False, state_override="open",
                           start_at=None, end_at=None, task_config=task,
                           primary_metric=task.get("primary_metric", "accuracy"))


def _row(correct: int, draw: str) -> dict[str, Any]:
    return dict(visible_results(_results(correct, draw=draw), phase=_phase())["breakdowns"]["category"]["a"])


def _draws(count: int, salt: str) -> list[str]:
    return [hashlib.sha256(f"{salt}{k}".encode()).hexdigest()[:32] for k in range(count)]


def _equal_rate(first: int, second: int) -> float:
    """Return how often two different files whose row counts are first and second show an equal row."""
    pairs = zip(_draws(PAIRS, "x"), _draws(PAIRS, "y"), strict=True)
    return sum(_row(first, a) == _row(second, b) for a, b in pairs) / PAIRS


def test_the_same_answers_show_the_same_figures() -> None:
    assert visible_results(_results(60, draw="ab" * 16), phase=_phase()) == visible_results(
        _results(60, draw="ab" * 16), phase=_phase())


def test_equal_counts_are_told_apart_from_unequal_ones_no_better_than_by_chance() -> None:
    same, moved = _equal_rate(60, 60), _equal_rate(60, 61)
    assert same < 0.9  # two files with equal counts usually show different rows
    assert abs(same - moved) < 0.12  # and as often as two files whose counts differ by one


def test_with_draws_from_the_exact_figures_equal_counts_always_show_equal_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "FRESH_DRAWS", False)
    assert _equal_rate(60, 60) == 1.0
    assert _equal_rate(60, 61) < 0.5


def test_a_ranked_slice_figure_is_exact_and_the_cell_of_a_coarse_one_carries_its_step() -> None:
    phase = _phase(primary_metric="popularity.tail.accuracy")
    shown = visible_results(_results(60, draw="ab" * 16), phase=phase)
    tail, head = shown["popularity"]["tail"], shown["popularity"]["head"]
    assert tail["accuracy"] == round(630 / 1100, 4) and tail["exact"] == ["accuracy"]
    assert read_path(shown, "popularity.tail.accuracy")[3] is None
    assert read_path(shown, "popularity.head.accuracy")[3] == head["grid"] == 0.1
    assert read_path(shown, "popularity.gap.accuracy")[3] == 0.1  # the tail is exact: only the head's step
    assert "accuracy" not in shown["overall"].get("exact", []) and shown["overall"]["grid"] == 0.05


def test_a_draw_is_the_files_answers_and_confidences_move_only_the_calibration_part() -> None:
    answers = np.array([0, 1, -1, 1], dtype=np.int8)
    plain = draw_of_predictions(Predictions(answer=answers, confidence=None, n_predictions=3))
    sure = draw_of_predictions(Predictions(answer=answers, confidence=np.array([0.9, 0.8, np.nan, 0.7]),
                                           n_predictions=3))
    other = draw_of_predictions(Predictions(answer=np.array([1, 1, -1, 1], dtype=np.int8), confidence=None,
                                            n_predictions=3))
    assert plain.answers == sure.answers != other.answers
    assert plain.confidences != sure.confidences


@given(value=st.floats(0.0, 1.0), low=st.floats(0.0, 0.2), high=st.floats(0.0, 0.2),
       grid=st.sampled_from(GRIDS), u=st.floats(0.0, 0.9999), z=st.integers(-3, 3))
def test_a_coarse_interval_holds_its_shown_figure_and_with_no_shift_the_exact_interval(
        value: float, low: float, high: float, grid: float, u: float, z: int) -> None:
    lo, hi = max(0.0, value - low), min(1.0, value + high)
    shown = on_grid(value, grid=grid, noise=(u, z))
    interval = Dither._interval([lo, hi], grid=grid, shift=(u, z))
    assert interval[0] <= shown <= interval[1]
    if z == 0:
        assert interval[0] <= lo + 1e-9 and hi - 1e-9 <= interval[1]


def test_a_row_whose_f1_one_answer_can_move_by_more_than_a_step_shows_no_f1() -> None:
    shown = visible_results(_results(60, draw="ab" * 16), phase=_phase())
    assert "f1" not in shown["breakdowns"]["category"]["a"] and "f1" in shown["overall"]
    ranked = visible_results(_results(60, draw="ab" * 16), phase=_phase(primary_metric="breakdowns.category.a.f1"))
    assert ranked["breakdowns"]["category"]["a"]["f1"] == round(60 / 111 * 0.9, 4)  # ranked: exact
