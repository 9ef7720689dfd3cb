"""Rounding to the ladder's step never pushes a figure out of its range (QA: answer_rate 1.003 at 1,838 items)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from leaderboard.disclosure import LadderDecision, rounded_to_step
from leaderboard.disclosure.ladder import ladder_view
from leaderboard.disclosure.probing import default_step

STEP = default_step(1838)  # 0.023325...: the multiple of it nearest 1.0 is 43 steps = 1.00298


def test_the_multiple_nearest_one_is_above_one_at_1838_items() -> None:
    assert round(round(1.0 / STEP) * STEP, 4) == 1.003  # the cause: plain rounding to the step
    assert rounded_to_step(1.0, STEP) == 1.0


def test_a_released_result_shows_every_rate_within_zero_and_one() -> None:
    full = {"accuracy": 0.55, "answer_rate": 1.0, "selective_accuracy": 0.55, "f1": 0.0,
            "ci": {"answer_rate": [1.0, 1.0], "accuracy": [0.5277, 0.5728], "f1": [0.0, 0.0]}}
    shown = ladder_view({"n_items": 1838, "overall": full, "breakdowns": {"category": {"a": dict(full)}}},
                        LadderDecision(step=STEP, released=True, shown=rounded_to_step(0.55, STEP), shown_by=1),
                        metric="accuracy")
    for part in (shown["overall"], shown["breakdowns"]["category"]["a"]):
        assert part["answer_rate"] == 1.0 and part["ci"]["answer_rate"] == [1.0, 1.0]
        assert part["f1"] == 0.0 and 0.0 <= part["selective_accuracy"] <= 1.0


@given(value=st.floats(0.0, 1.0), n=st.integers(1, 100_000))
def test_a_rate_stays_a_rate_and_within_half_a_step(value: float, n: int) -> None:
    step = default_step(n)
    shown = rounded_to_step(value, step)
    assert 0.0 <= shown <= 1.0
    assert abs(shown - value) <= step / 2 + 1e-4  # 4 decimals on top of the step


@given(value=st.floats(-1.0, 1.0), step=st.floats(0.001, 0.5))
def test_a_difference_stays_within_minus_one_and_one(value: float, step: float) -> None:
    assert -1.0 <= rounded_to_step(value, step) <= 1.0


def test_a_slice_already_on_a_coarser_grid_keeps_its_figures_under_the_ladder() -> None:
    coarse = {"accuracy": 0.6, "answer_rate": 1.0, "n": 111, "grid": 0.1, "ci": {"accuracy": [0.5, 0.7]}}
    shown = ladder_view({"overall": {"accuracy": 0.61}, "breakdowns": {"category": {"a": coarse}}},
                        LadderDecision(step=STEP, released=True, shown=rounded_to_step(0.61, STEP), shown_by=1),
                        metric="accuracy")
    assert shown["breakdowns"]["category"]["a"] == coarse  # not moved to multiples of 0.0233
    assert shown["overall"]["accuracy"] == rounded_to_step(0.61, STEP)
