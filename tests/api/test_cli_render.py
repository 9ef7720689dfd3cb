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
