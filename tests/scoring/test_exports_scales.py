"""What the exports take and how they read a metric path: direction, range and ids for every registered metric."""

from __future__ import annotations

import math
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from export_support import RETRIEVED_AT, scored_board

from scoring.exports import (
    FORMATS,
    ExportEntry,
    ExportError,
    ExportPhase,
    Figure,
    UnknownExportFormat,
    export_results,
    figures_from_cells,
    metric_scale,
    model_id,
)
from scoring.exports.identity import entry_details
from scoring.metrics import UnknownMetricError, higher_is_better
from scoring.metrics.registry import METRICS, PAIR_SHARES

ROOT = Path(__file__).resolve().parents[2]
RATE = (0.0, 1.0)


def task_of(metric: str) -> str:
    return "multiple_choice" if METRICS[metric].multiple_choice_only else "binary"


@pytest.mark.parametrize("metric", list(METRICS))
def test_every_registered_metric_has_an_id_a_unit_and_a_rate_range(metric: str) -> None:
    scale = metric_scale(metric, task_type=task_of(metric))  # type: ignore[arg-type]
    assert scale.metric_id and scale.kind and scale.unit == "proportion"
    assert (scale.min_score, scale.max_score) == RATE
    assert scale.higher_is_better is METRICS[metric].higher_is_better
    assert scale.slice == "overall"


@pytest.mark.parametrize("metric", [m for m, spec in METRICS.items() if spec.has_ci and spec.table != "pairs"])
def test_slices_keep_the_metrics_direction_and_differences_are_lower_is_better(metric: str) -> None:
    task = task_of(metric)
    for path in (f"popularity.tail.{metric}", f"breakdowns.category.St. Louis.{metric}"):
        scale = metric_scale(path, task_type=task)  # type: ignore[arg-type]
        assert scale.higher_is_better is higher_is_better(path) is METRICS[metric].higher_is_better
        assert (scale.min_score, scale.max_score) == RATE
    gap = metric_scale(f"popularity.gap.{metric}", task_type=task)  # type: ignore[arg-type]
    drop = metric_scale(f"popularity.relative_drop.{metric}", task_type=task)  # type: ignore[arg-type]
    assert (gap.lower_is_better, gap.min_score, gap.max_score) == (True, -1.0, 1.0)
    assert (drop.lower_is_better, drop.min_score, drop.max_score, drop.unit) == (True, -math.inf, 1.0, "ratio")
    assert gap.metric_id == f"tailboard.head_tail_gap.{metric}"
    assert metric_scale(f"breakdowns.category.St. Louis.{metric}", task_type=task).slice == (  # type: ignore[arg-type]
        "breakdowns.category.St. Louis")


@pytest.mark.parametrize("share", list(PAIR_SHARES))
def test_pair_shares_are_rates_higher_is_better(share: str) -> None:
    scale = metric_scale(f"pairs.{share}", task_type="multiple_choice")
    assert (scale.higher_is_better, scale.min_score, scale.max_score, scale.slice) == (True, 0.0, 1.0, "pairs")
    assert scale.metric_id == f"tailboard.pairs.{share}"


def test_canonical_metric_ids_where_the_figure_is_the_global_metric() -> None:
    assert metric_scale("accuracy", task_type="binary").metric_id == "accuracy"
    assert metric_scale("f1", task_type="binary").metric_id == "f1"
    assert metric_scale("f1", task_type="multiple_choice").metric_id == "f1_macro"  # docs/METRICS.md: f1 is macro there
    assert metric_scale("macro_f1", task_type="binary").metric_id == "f1_macro"
    assert metric_scale("group_accuracy", task_type="binary").metric_id == "tailboard.group_accuracy"
    assert metric_scale("ece", task_type="binary").lower_is_better


def test_an_unknown_path_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(UnknownMetricError, match="valid paths"):
        metric_scale("popularity.middle.accuracy", task_type="binary")
    with pytest.raises(UnknownMetricError, match="valid paths"):
        phase(columns=("breakdowns.category.accuracy",))


def phase(**changes: object) -> ExportPhase:
    fields = {"competition_slug": "creak", "competition_title": "CREAK", "competition_url": "https://t.example/c",
              "phase_id": 1, "phase_name": "Dev", "phase_url": "https://t.example/p/1", "task_type": "binary",
              "split": None, "closed": False, "ranking_metric": "accuracy", **changes}
    return ExportPhase(**fields)  # type: ignore[arg-type]


def entry(**changes: object) -> ExportEntry:
    fields = {"rank": 1, "stat_rank": 1, "display_name": "ana", "team": None, "method": "default", "metadata": {},
              "submitted_at": datetime(2026, 1, 2, tzinfo=UTC), "submission_id": 9,
              "figures": {"accuracy": Figure(0.5)}, **changes}
    return ExportEntry(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("changes", "message"), [
    ({"task_type": "regression"}, "task_type must be binary or multiple_choice"),
    ({"split": "hidden"}, "split must be public, private or None"),
    ({"competition_slug": " "}, "competition_slug must be a non-empty string"),
])
def test_a_bad_phase_is_refused_naming_the_field(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ExportError, match=message):
        phase(**changes)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"value": math.nan}, "finite number"),
    ({"value": 0.5, "ci": (0.6, 0.4)}, "lo <= hi"),
    ({"value": 0.5, "step": 0.0}, "positive number"),
])
def test_a_bad_figure_is_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ExportError, match=message):
        Figure(**kwargs)  # type: ignore[arg-type]


def test_an_entry_needs_an_aware_time_and_a_name() -> None:
    with pytest.raises(ExportError, match="submission 9: submitted_at must carry a time zone"):
        entry(submitted_at=datetime(2026, 1, 2))
    with pytest.raises(ExportError, match="must not be empty"):
        entry(method="  ")


def test_board_cells_become_figures_and_empty_cells_are_left_out() -> None:
    figures = figures_from_cells({"accuracy": (0.61, 0.5, 0.7, None), "popularity.tail.accuracy": (0.4, 0.3, 0.5, 0.1),
                                  "f1": (None, None, None, None), "popularity.gap.accuracy": (0.2, None, None, 0.1)})
    assert figures == {"accuracy": Figure(0.61, (0.5, 0.7)), "popularity.tail.accuracy": Figure(0.4, (0.3, 0.5), 0.1),
                       "popularity.gap.accuracy": Figure(0.2, None, 0.1)}
    assert figures["accuracy"].exact and not figures["popularity.gap.accuracy"].exact


def test_an_unknown_format_is_refused_with_the_valid_ones() -> None:
    the_phase, entries, _ = scored_board("plain")
    with pytest.raises(UnknownExportFormat, match="valid formats: every-eval-ever, hf-eval-results"):
        export_results("csv", the_phase, entries, retrieved_at=RETRIEVED_AT)
    assert FORMATS == ("every-eval-ever", "hf-eval-results")


def test_fallback_ids_keep_teams_users_and_odd_names_apart() -> None:
    p = phase()
    team, user = entry(team="ana", display_name="ana"), entry(team=None, display_name="ana")
    assert model_id(p, team) == ("tailboard/creak/team-ana/default", True)
    assert model_id(p, user) == ("tailboard/creak/user-ana/default", True)
    assert model_id(p, entry(team="a/b c", method="x/y"))[0] == "tailboard/creak/team-a%2Fb%20c/x%2Fy"
    assert model_id(p, entry(metadata={"model_id": "  "}))[1] is True
    assert model_id(p, entry(metadata={"model_id": "Qwen/Qwen2-7B"})) == ("Qwen/Qwen2-7B", False)


def test_only_known_metadata_keys_are_exported() -> None:
    details = entry_details(entry(metadata={"model": "M", "secret_note": "x", "url": ""}))
    assert details["model"] == "M"
    assert "secret_note" not in details and "url" not in details


def test_importing_the_exports_loads_neither_huggingface_hub_nor_jsonschema() -> None:
    code = ("import sys, scoring.exports\n"
            "print(sorted(m for m in ('huggingface_hub', 'jsonschema') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
