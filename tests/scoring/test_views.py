"""Views and metric paths in the phase config (docs/FORMATS.md, docs/METRICS.md), entry settings (docs/ENTRIES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring import LabelFileError, load_labels
from scoring.cli import main
from scoring.config import load_config
from scoring.views import View, views_of

ITEMS = [
    {"id": "a", "label": True, "category": "geo", "popularity": "head", "group": "g1"},
    {"id": "b", "label": False, "category": "geo", "popularity": "tail", "group": "g1"},
    {"id": "c", "label": True, "category": ["bio", "geo"], "popularity": "tail"},
    {"id": "d", "label": False, "category": "bio"},
]


def label_bytes(items: list[dict[str, Any]] = ITEMS) -> bytes:
    """Return a label file of items."""
    return "".join(json.dumps(item) + "\n" for item in items).encode()


def config(**extra: Any) -> dict[str, Any]:
    """Return a binary phase config with extra keys."""
    return {"task_type": "binary", **extra}


def test_a_config_without_views_has_one_overall_view_ranked_by_the_primary_metric() -> None:
    checked = load_config(config(primary_metric="f1"))
    assert checked.views == ()
    assert views_of(checked.views, primary_metric=checked.primary_metric) == (View("Overall", "f1"),)


def test_views_and_a_path_valued_primary_metric_are_read() -> None:
    checked = load_config(config(primary_metric="popularity.tail.accuracy", views=[
        {"name": " Long tail ", "metric": "popularity.tail.accuracy",
         "columns": ["popularity.head.answer_rate", "popularity.tail.answer_rate"]},
        {"name": "Overall", "metric": "accuracy"},
    ]))
    assert checked.primary_metric == "popularity.tail.accuracy"
    assert checked.views[0] == View("Long tail", "popularity.tail.accuracy",
                                    ("popularity.head.answer_rate", "popularity.tail.answer_rate"))
    assert checked.views[1].paths == ("accuracy",)


@pytest.mark.parametrize(("views", "message"), [
    ([], "non-empty list"),
    ([{"name": "A", "metric": "accuracy"}, {"name": "a", "metric": "f1"}], "same name"),
    ([{"name": "A", "metric": "popularity.middle.accuracy"}], "views[0].metric"),
    ([{"name": "A", "metric": "accuracy", "columns": ["f1", "f1"]}], "twice"),
    ([{"name": "A", "metric": "accuracy", "sort": "desc"}], "unknown key"),
    ([{"name": "", "metric": "accuracy"}], "views[0].name"),
    ([{"name": "A", "metric": "accuracy", "columns": "f1"}], "columns must be a list"),
])
def test_a_malformed_view_is_refused_naming_where(views: Any, message: str) -> None:
    with pytest.raises(LabelFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(config(views=views))


def test_an_unknown_primary_metric_names_the_valid_metrics_and_paths() -> None:
    with pytest.raises(LabelFileError) as caught:
        load_config(config(primary_metric="auc"))
    assert "valid metrics" in str(caught.value) and "popularity.<" in str(caught.value)


@pytest.mark.parametrize("path", ["popularity.tail.accuracy", "popularity.gap.accuracy",
                                  "popularity.relative_drop.f1", "breakdowns.category.bio.f1",
                                  "group_accuracy", "aurc", "ece"])
def test_paths_the_label_file_produces_are_accepted(path: str) -> None:
    labels = load_labels(label_bytes(), config(primary_metric=path))
    assert labels.config.primary_metric == path


@pytest.mark.parametrize("path", ["popularity.torso.accuracy", "breakdowns.category.chem.accuracy",
                                  "breakdowns.domain.geo.accuracy", "pairs.both_correct"])
def test_a_path_the_label_file_cannot_produce_is_refused_with_the_valid_paths(path: str) -> None:
    with pytest.raises(LabelFileError) as caught:
        load_labels(label_bytes(), config(views=[{"name": "V", "metric": "accuracy", "columns": [path]}]))
    message = str(caught.value)
    assert path in message and "valid paths for this label file" in message
    assert "popularity.tail.<" in message and "breakdowns.category.<bio|geo>" in message


def test_group_accuracy_needs_groups() -> None:
    no_groups = [{k: v for k, v in item.items() if k != "group"} for item in ITEMS]
    with pytest.raises(LabelFileError, match="group_accuracy"):
        load_labels(label_bytes(no_groups), config(primary_metric="group_accuracy"))


def test_views_survive_the_label_cache() -> None:
    views = [{"name": "Long tail", "metric": "popularity.tail.accuracy", "columns": ["answer_rate"]}]
    first = load_labels(label_bytes(), config(views=views), cache=True)
    again = load_labels(label_bytes(), config(views=views), cache=True)
    assert again.config == first.config
    assert again.config.views == (View("Long tail", "popularity.tail.accuracy", ("answer_rate",)),)


def test_the_command_line_refuses_an_unproducible_path_with_exit_3(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "labels.jsonl").write_bytes(label_bytes())
    (tmp_path / "pred.csv").write_text("id,prediction\na,true\nb,false\n")
    (tmp_path / "phase.json").write_text(json.dumps(config(primary_metric="popularity.torso.accuracy")))
    code = main(["evaluate", "--labels", str(tmp_path / "labels.jsonl"), "--predictions",
                 str(tmp_path / "pred.csv"), "--config", str(tmp_path / "phase.json")])
    assert code == 3
    assert "popularity.torso.accuracy" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "expected"), [
    ({}, (3, None)),
    ({"max_methods": 1, "final_selections": 2}, (1, 2)),
    ({"final_selections": None}, (3, None)),
])
def test_entry_settings_are_read_with_their_defaults(extra: dict[str, Any], expected: tuple[int, Any]) -> None:
    checked = load_config(config(**extra))
    assert (checked.max_methods, checked.final_selections) == expected


@pytest.mark.parametrize("extra", [{"max_methods": 0}, {"max_methods": 1.5}, {"final_selections": 0},
                                   {"final_selections": "2"}])
def test_bad_entry_settings_are_refused_naming_the_key(extra: dict[str, Any]) -> None:
    with pytest.raises(LabelFileError, match=next(iter(extra))):
        load_config(config(**extra))
