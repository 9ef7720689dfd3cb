"""Slices on hidden data reach participants on their sample's grid, dithered; organizers see them exact."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from leaderboard.disclosure import visible_results
from leaderboard.disclosure.precision import GRIDS, NOISE_RATIO, grid_for, noise, on_grid, thinned


def _slice(n: int, correct: int) -> dict[str, Any]:
    accuracy = correct / n
    return {"n": n, "answered": n, "correct": correct, "accuracy": accuracy, "answer_rate": 1.0,
            "selective_accuracy": accuracy, "f1": accuracy * 0.9, "macro_f1": accuracy * 0.95, "ece": 0.123456,
            "aurc": 0.3456, "ci": {"accuracy": [accuracy - 0.08, min(1.0, accuracy + 0.08)], "answer_rate": [1.0, 1.0]}}


def _results(*, delta: int = 0, n: int = 1200) -> dict[str, Any]:
    rng = random.Random(5)
    curve = [[k / n, rng.random() * 0.5] for k in range(1, n + 1)]
    return {
        "n_items": n, "overall": _slice(n, 700 + delta),
        "breakdowns": {"category": {"a": _slice(111, 60 + delta), "b": _slice(400, 210)}},
        "popularity": {"head": _slice(100, 70), "tail": _slice(1100, 630 + delta),
                       "gap": {"accuracy": 0.127}, "relative_drop": {"accuracy": 0.18}},
        "risk_coverage": curve, "aurc": 0.2345,
        "reliability": [{"lo": k / 10, "hi": (k + 1) / 10, "n": size, "accuracy": 0.61234,
                         "confidence": 0.0512 + k / 10} for k, size in enumerate((500, 59, 61, 580))],
        "warnings": [],
    }


def _phase(status: str = "open") -> Any:
    return SimpleNamespace(id=3, labels_sha256="ab" * 32, has_private_split=False, state_override=status,
                           start_at=None, end_at=None, task_config={"task_type": "binary"}, primary_metric="accuracy")


def _on(value: float, grid: float) -> bool:
    return abs(value / grid - round(value / grid)) < 1e-6


def test_slices_show_no_counts_and_sit_on_their_grid() -> None:
    shown = visible_results(_results(), phase=_phase())
    row = shown["breakdowns"]["category"]["a"]
    assert "correct" not in row and "answered" not in row and row["n"] == 111
    assert row["grid"] == grid_for(111) == 0.1
    assert all(_on(row[m], 0.1) for m in ("accuracy", "selective_accuracy", "ece", "aurc"))
    assert not {"f1", "macro_f1"} & set(row) and set(row["ci"]) == {"accuracy", "answer_rate"}  # one answer moves them
    assert all(_on(bound, 0.1) for bound in row["ci"]["accuracy"])
    assert row["ci"]["accuracy"][0] <= row["accuracy"] <= row["ci"]["accuracy"][1]
    assert shown["popularity"]["tail"]["grid"] == 0.05 and "correct" not in shown["popularity"]["tail"]
    assert shown["popularity"]["gap"]["accuracy"] == round(shown["popularity"]["head"]["accuracy"]
                                                            - shown["popularity"]["tail"]["accuracy"], 4)


def test_overall_keeps_its_ranked_figure_and_own_counts_exact_and_the_rest_on_its_grid() -> None:
    overall = visible_results(_results(), phase=_phase())["overall"]
    assert overall["accuracy"] == round(700 / 1200, 4) and overall["exact"] == ["accuracy", "answer_rate", "answered",
                                                                                "n"]
    assert "correct" not in overall and overall["answered"] == 1200 and overall["grid"] == grid_for(1200)
    assert overall["ci"]["accuracy"] == [round(700 / 1200 - 0.08, 4), round(700 / 1200 + 0.08, 4)]
    assert all(_on(overall[m], grid_for(1200)) for m in ("f1", "macro_f1", "selective_accuracy", "ece"))
    assert abs(overall["ece"] - 0.123456) <= 3 * grid_for(1200)


def test_the_same_file_shows_the_same_numbers_and_one_flipped_item_is_no_oracle() -> None:
    assert visible_results(_results(), phase=_phase()) == visible_results(_results(), phase=_phase())
    before = visible_results(_results(), phase=_phase())["breakdowns"]["category"]["a"]["accuracy"]
    after = visible_results(_results(delta=1), phase=_phase())["breakdowns"]["category"]["a"]["accuracy"]
    assert abs(after - before) <= 2 * 0.1  # within a grid step of the exact value either way


def test_risk_coverage_shows_at_most_twenty_points_far_apart_on_the_grid() -> None:
    points = visible_results(_results(), phase=_phase())["risk_coverage"]
    items = [round(coverage * 1200) for coverage, _ in points]
    assert len(points) <= 21 and items[-1] == 1200
    assert all(b - a >= 60 for a, b in zip([0, *items], items, strict=False))  # N/20 = 60 > 25
    assert all(_on(risk, grid_for(k)) for (_, risk), k in zip(points, items, strict=True))


def test_reliability_bins_need_n_over_twenty_answered_items_and_show_a_coarse_accuracy() -> None:
    bins = visible_results(_results(), phase=_phase())["reliability"]
    assert [b["n"] for b in bins] == [500, 61, 580]  # the bin of 59 (< 60 = N/20) is left out
    assert all(_on(b["accuracy"], grid_for(b["n"])) and b["grid"] == grid_for(b["n"]) for b in bins)
    assert bins[1]["confidence"] == 0.25


def test_after_close_slices_stay_on_their_grid_and_organizers_see_them_exact() -> None:
    closed = visible_results(_results(), phase=_phase("closed"))["breakdowns"]["category"]["a"]
    assert "correct" not in closed and closed["grid"] == 0.1
    exact = visible_results(_results(), phase=_phase(), viewer_is_organizer=True)
    assert exact["breakdowns"]["category"]["a"]["correct"] == 60 and "grid" not in exact["breakdowns"]["category"]["a"]
    assert len(exact["risk_coverage"]) == 1200 and exact["reliability"][1]["n"] == 59


@given(answered=st.integers(1, 10**6))
def test_the_grid_is_no_finer_than_the_sampling_error_and_at_most_two_and_a_half_times_it(answered: int) -> None:
    grid = grid_for(answered)
    assert grid in GRIDS and grid >= max(0.01, 1 / math.sqrt(answered)) - 1e-12
    assert grid <= max(0.01, 2.5 / math.sqrt(answered)) + 1e-12


@given(value=st.floats(0.0, 1.0), grid=st.sampled_from(GRIDS), u=st.floats(0.0, 0.9999), z=st.integers(-4, 4))
def test_a_noisy_figure_is_a_rate_on_the_grid_within_its_noise_and_one_step(value: float, grid: float, u: float,
                                                                           z: int) -> None:
    shown = on_grid(value, grid=grid, noise=(u, z))
    assert 0.0 <= shown <= 1.0 and _on(shown, grid) and abs(shown - value) <= (abs(z) + 1) * grid + 1e-9


def test_the_noise_is_unbiased_rounding_plus_a_geometric_number_of_steps_and_can_show_any_point() -> None:
    draws = [noise("key", "path", k) for k in range(20000)]
    zeros = sum(z == 0 for _, z in draws) / len(draws)
    assert abs(zeros - (1 - NOISE_RATIO) / (1 + NOISE_RATIO)) < 0.02
    assert abs(sum(z for _, z in draws) / len(draws)) < 0.03  # symmetric
    shown = [on_grid(0.0, grid=0.1, noise=d) for d in draws]
    assert {0.0, 0.1, 0.2} <= set(shown)  # an exact 0 is not always shown 0: no reading proves it
    mean = sum(on_grid(0.43, grid=0.1, noise=d) for d in draws) / len(draws)
    assert abs(mean - 0.43) < 0.01  # unbiased away from the ends


def test_thinned_points_keep_the_last_and_are_gap_items_apart() -> None:
    points = [[k / 100, 0.1] for k in range(1, 101)]
    kept = thinned(points, n=100, gap=30)
    assert [round(c * 100) for c, _ in kept] == [30, 60, 100]


def test_pair_shares_and_popularity_curve_bins_sit_on_their_grid() -> None:
    results = _results()
    results["pairs"] = {"n_pairs": 600, "incomplete_pairs": 0, "both_correct": 0.4117, "head_only": 0.1883,
                        "tail_only": 0.1533, "neither": 0.2467}
    results["popularity_curve"] = [{"lo": 1.0, "hi": 9.0, **_slice(120, 70)}, {"lo": 10.0, "hi": 99.0, **_slice(20, 9)}]
    shown = visible_results(results, phase=_phase())
    pairs = shown["pairs"]
    assert pairs["n_pairs"] == 600 and all(_on(pairs[k], grid_for(600)) for k in ("both_correct", "neither"))
    assert abs(pairs["both_correct"] - 0.4117) <= 3 * grid_for(600)  # about a step off, rarely three
    [curve_bin] = shown["popularity_curve"]  # the bin of 20 answered items is under min_slice_items
    assert (curve_bin["lo"], curve_bin["hi"], curve_bin["grid"]) == (1.0, 9.0, 0.1) and "correct" not in curve_bin
    assert _on(curve_bin["accuracy"], 0.1)
