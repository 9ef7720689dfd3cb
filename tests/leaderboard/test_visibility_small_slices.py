"""Participants never see a slice small enough to give one item's correctness away."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from leaderboard.services.visibility import MIN_SLICE_ITEMS, SMALL_SLICE_NOTE, visible_results


def _slice(n: int, accuracy: float) -> dict[str, Any]:
    return {"n": n, "answered": n, "correct": round(n * accuracy), "accuracy": accuracy, "ci": {}}


def _results() -> dict[str, Any]:
    return {
        "n_items": 7,
        "overall": _slice(7, 0.5714285714),
        "breakdowns": {"category": {"big": _slice(6, 0.5), "lonely": _slice(1, 1.0)}},
        "popularity": {
            "head": _slice(6, 0.5),
            "tail": _slice(1, 1.0),
            "gap": {"accuracy": -0.5},
            "relative_drop": {"accuracy": -1.0},
        },
        "pairs": {"n_pairs": 1, "both_correct": 1.0, "head_only": 0.0, "tail_only": 0.0, "neither": 0.0,
                  "incomplete_pairs": 0},
        "warnings": [],
    }


def _closed_phase() -> Any:
    return SimpleNamespace(has_private_split=False, state_override="closed", start_at=None, end_at=None)


def test_single_item_slices_are_hidden_from_participants() -> None:
    shown = visible_results(_results(), phase=_closed_phase())
    assert MIN_SLICE_ITEMS == 2
    assert list(shown["breakdowns"]["category"]) == ["big"]
    assert "tail" not in shown["popularity"] and shown["popularity"]["gap"] == {}
    assert shown["pairs"]["both_correct"] is None and shown["pairs"]["n_pairs"] == 1
    assert SMALL_SLICE_NOTE in shown["warnings"]
    assert shown["overall"]["accuracy"] == 0.5714


def test_organizers_see_every_slice() -> None:
    shown = visible_results(_results(), phase=_closed_phase(), viewer_is_organizer=True)
    assert "lonely" in shown["breakdowns"]["category"]
    assert shown["popularity"]["tail"]["accuracy"] == 1.0
    assert shown["pairs"]["both_correct"] == 1.0


def test_builtin_baselines_show_only_overall_scores_to_participants() -> None:
    shown = visible_results(_results(), phase=_closed_phase(), overall_only=True)
    assert set(shown) == {"n_items", "overall", "warnings"}
    assert visible_results(_results(), phase=_closed_phase(), viewer_is_organizer=True, overall_only=True)["breakdowns"]
