"""A phase's stored config (phase_data.labelsets.config_to_json) reads back as the same checked config."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.phase_data import config_to_json
from scoring.config import load_config

CONFIGS: list[dict[str, Any]] = [
    {"task_type": "binary"},
    {"task_type": "multiple_choice", "options": ["A", "B", "C"], "primary_metric": "macro_f1",
     "breakdowns": ["category", "domain"], "missing_ids": "error"},
    {"task_type": "binary", "primary_metric": "popularity.tail.accuracy",
     "popularity": {"head_min": 186, "tail_max": 106},
     "views": [{"name": "Long tail", "metric": "popularity.tail.accuracy",
                "columns": ["popularity.head.answer_rate", "popularity.tail.answer_rate"]},
               {"name": "Overall", "metric": "accuracy", "columns": []}],
     "max_methods": 2, "final_selections": 1, "min_slice_items": 10, "public_feedback": "ladder",
     "ladder_step": 0.02, "min_answered": 5, "public_fields": ["source"]},
]


@pytest.mark.parametrize("raw", CONFIGS)
def test_the_stored_config_reads_back_the_same(raw: dict[str, Any]) -> None:
    checked = load_config(raw)
    assert load_config(config_to_json(checked)) == checked


def test_views_and_entry_settings_are_stored() -> None:
    stored = config_to_json(load_config(CONFIGS[2]))
    assert stored["views"][0] == CONFIGS[2]["views"][0]
    assert (stored["max_methods"], stored["final_selections"]) == (2, 1)
