"""Leaderboard views of a phase (docs/FORMATS.md, Leaderboard views): their shape, checked when a config is read.

A phase config may list views, each ranking by one metric path (docs/METRICS.md, Metric paths) and
showing a few more as columns; without them there is one view, ``Overall``, ranked
by ``primary_metric``. Whether a label file can produce a path is checked by
``scoring.producible`` when a phase is created or its views are edited.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scoring.metrics.paths import resolve_path, valid_paths_text
from scoring.metrics.registry import METRICS, UnknownMetricError
from scoring.types import LabelFileError

DEFAULT_VIEW_NAME = "Overall"
MAX_VIEWS = 8
MAX_COLUMNS = 12
MAX_VIEW_NAME = 60


@dataclass(frozen=True)
class View:
    """One leaderboard view: its name, the metric path it ranks by, and extra column paths."""

    name: str
    metric: str
    columns: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the view as it is written in a phase config."""
        return {"name": self.name, "metric": self.metric, "columns": list(self.columns)}

    @property
    def paths(self) -> tuple[str, ...]:
        """Return every path the view reads: its metric first, then its columns."""
        return (self.metric, *(c for c in self.columns if c != self.metric))


def check_path(path: object, *, key: str) -> str:
    """Return path when it is a well-formed metric path, or raise LabelFileError naming key."""
    if not isinstance(path, str) or not path:
        raise LabelFileError(f"phase config: {key} must be a metric path (a string), not {path!r}")
    try:
        resolve_path(path)
    except UnknownMetricError as error:
        if "." not in path:
            raise LabelFileError(f"phase config: {key} {path!r} is not a metric; valid metrics: "
                                 f"{', '.join(METRICS)}; or a metric path: {valid_paths_text()}") from None
        raise LabelFileError(f"phase config: {key}: {error}") from None
    return path


def check_views(raw: object) -> tuple[View, ...]:
    """Return the checked views of a config's ``views`` value (None: no views listed)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise LabelFileError("phase config: views must be a non-empty list of objects")
    if len(raw) > MAX_VIEWS:
        raise LabelFileError(f"phase config: at most {MAX_VIEWS} views")
    views = tuple(_view(entry, index) for index, entry in enumerate(raw))
    names = [v.name.casefold() for v in views]
    if len(set(names)) != len(names):
        raise LabelFileError("phase config: two views have the same name")
    return views


def _view(entry: object, index: int) -> View:
    """Return one checked view object."""
    where = f"views[{index}]"
    if not isinstance(entry, Mapping):
        raise LabelFileError(f"phase config: {where} must be an object with name, metric and columns")
    unknown = sorted(set(entry) - {"name", "metric", "columns"})
    if unknown:
        raise LabelFileError(f"phase config: {where} has unknown key(s) {unknown}; valid keys: name, metric, columns")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_VIEW_NAME:
        raise LabelFileError(f"phase config: {where}.name must be a text of 1 to {MAX_VIEW_NAME} characters")
    metric = check_path(entry.get("metric"), key=f"{where}.metric")
    columns = entry.get("columns", [])
    if not isinstance(columns, list) or len(columns) > MAX_COLUMNS:
        raise LabelFileError(f"phase config: {where}.columns must be a list of at most {MAX_COLUMNS} metric paths")
    checked = tuple(check_path(c, key=f"{where}.columns[{i}]") for i, c in enumerate(columns))
    if len(set(checked)) != len(checked):
        raise LabelFileError(f"phase config: {where}.columns lists a path twice")
    return View(name=name.strip(), metric=metric, columns=checked)


def views_of(views: tuple[View, ...], *, primary_metric: str) -> tuple[View, ...]:
    """Return the views a phase shows: its own, or the one default view ranked by primary_metric."""
    return views or (View(name=DEFAULT_VIEW_NAME, metric=primary_metric),)


def config_paths(primary_metric: str, views: Iterable[View]) -> list[str]:
    """Return every path a config names (primary metric, each view's metric and columns), once each."""
    seen = dict.fromkeys([primary_metric, *(p for v in views for p in v.paths)])
    return list(seen)
