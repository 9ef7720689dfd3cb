"""Pages name a metric, or a metric path, the way the ranking names it."""

from __future__ import annotations

import pytest

from leaderboard.board import path_label
from leaderboard.web.templating import metric_name


@pytest.mark.parametrize("path", ["popularity.tail.accuracy", "popularity.gap.accuracy", "category.science.f1",
                                  "pairs.both_correct"])
def test_a_metric_path_is_named_as_the_board_names_it(path: str) -> None:
    assert metric_name(path) == path_label(path)
    assert "." not in metric_name(path)


def test_a_registered_metric_or_count_keeps_its_registry_label() -> None:
    assert metric_name("accuracy") == "Accuracy"
    assert metric_name("macro_f1") == "Macro-F1"
    assert metric_name("answered") == "Answered"


def test_the_tail_primary_metric_reads_as_accuracy_on_the_tail() -> None:
    assert metric_name("popularity.tail.accuracy") == "Accuracy · tail"
