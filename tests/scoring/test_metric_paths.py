"""One registry names every metric, its label and its direction; metric paths (docs/METRICS.md) resolve through it."""

from __future__ import annotations

import pytest

import scoring
from scoring.metrics import METRICS, UnknownMetricError, get_metric, higher_is_better, metric_label, resolve_path


@pytest.mark.parametrize(
    ("path", "higher"),
    [
        ("accuracy", True),
        ("f1", True),
        ("group_accuracy", True),
        ("ece", False),
        ("aurc", False),
        ("popularity.tail.accuracy", True),
        ("popularity.head.ece", False),
        ("popularity.gap.accuracy", False),
        ("popularity.gap.f1", False),
        ("popularity.relative_drop.f1", False),
        ("popularity.relative_drop.selective_accuracy", False),
        ("breakdowns.category.science.f1", True),
        ("breakdowns.category.U.S. history.accuracy", True),
        ("breakdowns.agreement.tie.ece", False),
        ("pairs.both_correct", True),
        ("pairs.neither", True),
    ],
)
def test_every_spec_path_resolves_to_its_direction(path: str, higher: bool) -> None:
    assert higher_is_better(path) is higher
    assert scoring.higher_is_better(path) is higher


@pytest.mark.parametrize(
    "path",
    ["acc", "", "n", "answered", "overall.accuracy", "popularity.gap.ece", "popularity.relative_drop.aurc",
     "popularity.middle.accuracy", "popularity.tail", "breakdowns.category.f1", "breakdowns..x.f1",
     "breakdowns.category.x.acc", "pairs.n_pairs", "pairs.both_correct.x", "splits.public.accuracy"],
)
def test_an_unknown_path_is_an_error_naming_the_valid_ones_never_higher_is_better(path: str) -> None:
    with pytest.raises(UnknownMetricError) as caught:
        higher_is_better(path)
    message = str(caught.value)
    assert repr(path) in message
    assert "valid paths: accuracy, answer_rate" in message and "popularity.<gap|relative_drop>" in message


def test_a_path_names_the_registry_metric_it_ends_in() -> None:
    assert resolve_path("breakdowns.category.a.b.macro_f1").metric == "macro_f1"
    assert resolve_path("pairs.tail_only").metric == "tail_only"


def test_every_metric_has_a_label_and_a_direction_in_one_place() -> None:
    for name, metric in METRICS.items():
        assert metric.name == name
        assert metric.label and metric_label(name) == metric.label
        assert higher_is_better(name) is metric.higher_is_better
    assert [m for m in METRICS if not METRICS[m].higher_is_better] == ["ece", "aurc"]
    assert [m for m in METRICS if not METRICS[m].has_ci] == ["ece", "aurc"]


def test_counts_and_pair_shares_have_labels_but_no_direction() -> None:
    assert metric_label("n") == "Items" and metric_label("both_correct") == "Both correct"
    with pytest.raises(UnknownMetricError, match="valid names: accuracy"):
        metric_label("acc")


def test_get_metric_is_the_lookup_the_phase_config_uses() -> None:
    assert get_metric("aurc").higher_is_better is False
    with pytest.raises(scoring.LabelFileError, match="valid metrics: accuracy, answer_rate"):
        scoring.load_config({"task_type": "binary", "primary_metric": "acc"})
