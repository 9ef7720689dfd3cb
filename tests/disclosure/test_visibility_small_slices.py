"""Participants never see a slice with too few answered items to hide one item's correctness (docs/PROBING.md)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from leaderboard.disclosure import policy, visible_results
from leaderboard.disclosure.policy import SMALL_SLICE_NOTE


def _slice(n: int, accuracy: float, *, answered: int | None = None) -> dict[str, Any]:
    answered = n if answered is None else answered
    return {"n": n, "answered": answered, "correct": round(n * accuracy), "accuracy": accuracy,
            "answer_rate": answered / n, "ece": 0.1, "ci": {"accuracy": [0.0, 1.0], "answer_rate": [0.0, 1.0]}}


def _results(scale: int = 1) -> dict[str, Any]:
    """A closed phase's result: a big category, a one-item category, head/tail, one pair."""
    big = 30 * scale
    return {
        "n_items": big + 1,
        "overall": _slice(big + 1, 0.5),
        "breakdowns": {"category": {"big": _slice(big, 0.5), "lonely": _slice(1, 1.0),
                                    "unanswered": _slice(40, 0.025, answered=1)}},
        "popularity": {
            "head": _slice(big, 0.5),
            "tail": _slice(1, 1.0),
            "gap": {"accuracy": -0.5},
            "relative_drop": {"accuracy": -1.0},
        },
        "pairs": {"n_pairs": 1, "both_correct": 1.0, "head_only": 0.0, "tail_only": 0.0, "neither": 0.0,
                  "incomplete_pairs": 0},
        "warnings": [],
    }


def _phase(min_slice_items: int | None = None, *, status: str = "closed", private: bool = False) -> Any:
    config: dict[str, Any] = {"task_type": "binary"}
    if min_slice_items is not None:
        config["min_slice_items"] = min_slice_items
    return SimpleNamespace(id=1, labels_sha256="0" * 64, has_private_split=private, state_override=status,
                           start_at=None, end_at=None, task_config=config, primary_metric="accuracy")


def test_slices_under_min_slice_items_answered_are_hidden_from_participants() -> None:
    shown = visible_results(_results(), phase=_phase())
    assert list(shown["breakdowns"]["category"]) == ["big"]
    assert "tail" not in shown["popularity"] and shown["popularity"]["gap"] == {}
    assert shown["pairs"]["both_correct"] is None and shown["pairs"]["n_pairs"] == 1
    assert SMALL_SLICE_NOTE.format(k=25) in shown["warnings"]
    assert shown["overall"]["accuracy"] == 0.5


def test_a_big_slice_with_few_answered_items_is_hidden() -> None:
    shown = visible_results(_results(), phase=_phase(2))
    assert "unanswered" not in shown["breakdowns"]["category"]  # 40 items, 1 answered
    assert "lonely" not in shown["breakdowns"]["category"]
    assert "big" in shown["breakdowns"]["category"]


def test_min_slice_items_is_a_phase_setting() -> None:
    shown = visible_results(_results(), phase=_phase(1))
    assert set(shown["breakdowns"]["category"]) == {"big", "lonely", "unanswered"}
    assert shown["popularity"]["tail"]["accuracy"] == 1.0


def test_calibration_figures_need_a_hundred_answered_items() -> None:
    small = visible_results(_results(), phase=_phase(1))
    assert "ece" not in small["overall"] and "ece" not in small["breakdowns"]["category"]["big"]
    big = visible_results(_results(scale=4), phase=_phase(1))
    assert big["overall"]["ece"] == 0.1 and big["breakdowns"]["category"]["big"]["ece"] == 0.1
    assert "ece" not in big["breakdowns"]["category"]["lonely"]


def test_a_file_answering_fewer_than_min_slice_items_shows_no_overall_figure_only_its_own_counts() -> None:
    results = _results()
    results["overall"] = _slice(100, 0.01, answered=1)
    shown = visible_results(results, phase=_phase())
    assert shown["overall"] == {"n": 100, "answered": 1}
    assert any("fewer than 25 items" in warning for warning in shown["warnings"])


def test_with_the_bound_off_a_small_overall_keeps_its_exact_rates_without_counts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "OVERALL_BOUNDED", False)
    results = _results()
    results["overall"] = _slice(100, 0.01, answered=1)
    shown = visible_results(results, phase=_phase())
    assert "correct" not in shown["overall"] and "answered" not in shown["overall"]
    assert shown["overall"]["accuracy"] == 0.01


def test_organizers_see_every_slice() -> None:
    shown = visible_results(_results(), phase=_phase(), viewer_is_organizer=True)
    assert "lonely" in shown["breakdowns"]["category"]
    assert shown["popularity"]["tail"]["accuracy"] == 1.0
    assert shown["pairs"]["both_correct"] == 1.0
    assert shown["overall"]["ece"] == 0.1


def test_a_result_shows_its_slices_under_the_same_rules_whoever_uploaded_it() -> None:
    shown = visible_results(_results(), phase=_phase())  # a built-in baseline's result too (issue 20)
    assert "popularity" in shown and "breakdowns" in shown
    assert "lonely" not in shown["breakdowns"]["category"]


def test_unknown_result_keys_stay_hidden_from_participants() -> None:
    results = {**_results(), "per_item": [1, 0, 1]}
    results["overall"] = {**results["overall"], "item_correct": [1, 0]}
    shown = visible_results(results, phase=_phase())
    assert "per_item" not in shown and "item_correct" not in shown["overall"]


def test_risk_coverage_points_are_at_least_min_slice_items_apart() -> None:
    results = _results(scale=4)
    n = results["overall"]["n"]
    results["overall"]["risk_coverage"] = [[k / n, 0.5] for k in range(1, n + 1)]
    shown = visible_results(results, phase=_phase(25))["overall"]["risk_coverage"]
    items = [round(point[0] * n) for point in shown]
    assert items[-1] == n
    assert all(b - a >= 25 for a, b in zip([0, *items], items, strict=False))


def test_under_the_ladder_no_exact_public_count_is_shown_even_after_close() -> None:
    phase = _phase(1)
    phase.task_config["public_feedback"] = "ladder"
    shown = visible_results(_results(scale=4), phase=phase)
    assert shown["overall"]["accuracy"] == 0.5  # exact after close
    slices = [shown["overall"], *shown["breakdowns"]["category"].values(), shown["popularity"]["head"]]
    assert not any({"correct", "answered"} & set(part) for part in slices)
