"""The client's text rendering of a scored submission (tailboard_cli/render.py)."""

from __future__ import annotations

from tailboard_cli import render


def test_a_breakdown_with_every_slice_hidden_says_so_instead_of_an_empty_line() -> None:
    results = {"n_items": 18, "overall": {"accuracy": 0.5, "n": 18}, "breakdowns": {"category": {}}}
    lines = render.scores(results, "accuracy")
    assert "  accuracy by category: (slices too small to show)" in lines
    assert not any(line.rstrip().endswith(":") for line in lines)


def test_a_breakdown_lists_each_shown_slice() -> None:
    results = {"n_items": 60, "overall": {"accuracy": 0.5, "n": 60},
               "breakdowns": {"category": {"geography": {"accuracy": 0.75}, "history": {"accuracy": 0.25}}}}
    assert "  accuracy by category: geography 0.7500, history 0.2500" in render.scores(results, "accuracy")


def test_coarse_figures_print_with_their_step_and_exact_ones_to_four_decimals() -> None:
    result = {"n_items": 1200, "warnings": ["a note"],
              "overall": {"n": 1200, "accuracy": 0.5833, "f1": 0.55, "grid": 0.05, "exact": ["accuracy", "n"]},
              "breakdowns": {"category": {"a": {"n": 111, "accuracy": 0.6, "grid": 0.1}}}}
    lines = render.scores(result, primary="accuracy")
    assert any("accuracy" in line and "0.5833" in line and "ranking metric" in line for line in lines)
    assert any(line.split()[0] == "f1" and "0.55 ±0.05" in line for line in lines)
    assert not any(line.split()[0] == "grid" for line in lines)
    assert "  accuracy by category: a 0.60 ±0.10" in lines and "note: a note" in lines
