"""The figures a phase ranks by: the one kind of figure about hidden items a participant sees exact.

A ranking by a value nobody can read is no ranking, and ordering by an exact value shown
coarsely would leak the same bits through the order; so the figures the phase's views
rank by (and its primary metric) are shown to 4 decimals wherever their slice is shown.
Every other figure about hidden items is coarse (disclosure/visibility.py). Each ranked
figure costs what an exact public score costs on Kaggle: flip one answer, read one
label (docs/PROBING.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from leaderboard.models import Phase
from scoring.types import LabelFileError
from scoring.views import check_views, views_of

RankedFigures = dict[str, frozenset[str]]
"""Slice path ('overall', 'popularity.tail', 'popularity.gap', 'breakdowns.category.x', 'pairs') -> its ranked keys."""


def ranked_paths(phase: Phase) -> tuple[str, ...]:
    """Return the metric paths the phase ranks by: its primary metric and each view's metric, once each."""
    try:
        views = views_of(check_views((phase.task_config or {}).get("views")), primary_metric=phase.primary_metric)
    except LabelFileError:  # a config checked when it was stored; never fail a read on it
        views = ()
    return tuple(dict.fromkeys([phase.primary_metric, *(view.metric for view in views)]))


def ranked_figures(phase: Phase) -> RankedFigures:
    """Return, per slice path of a result object, the figures of it the phase ranks by."""
    return slice_keys(ranked_paths(phase))


def slice_keys(paths: Iterable[str]) -> RankedFigures:
    """Return the metric paths grouped by the slice object that holds them."""
    out: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split(".")
        where, key = ("overall", parts[0]) if len(parts) == 1 else (".".join(parts[:-1]), parts[-1])
        out.setdefault(where, set()).add(key)
    return {where: frozenset(keys) for where, keys in out.items()}
