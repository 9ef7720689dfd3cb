"""What a phase's board shows (docs/FORMATS.md#leaderboard-views): its views, the metric paths kept, their labels.

A phase lists views in its config (``views``), or has the one default view ``Overall``
ranked by ``primary_metric``. Beside each view's metric and columns, the board keeps for
every score the figures its page shows under the ranking: the overall metrics (the
default view's columns), head and tail accuracy and answer rate with the head − tail gap
(CoLoTa's Table 5 layout), the head/tail metric per breakdown value, and the pair
shares. Which paths exist comes from the label set (its buckets, breakdown values and
pairs), so the cells of a score are the same whatever file it was.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from leaderboard.disclosure import SENSITIVE_KEYS, probing_settings
from leaderboard.models import Phase
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import ServiceContext
from scoring import METRICS, LabelSet, metric_label
from scoring.metrics.paths import resolve_path
from scoring.metrics.registry import PAIR_SHARES
from scoring.producible import Producible
from scoring.types import BUCKET_NAMES
from scoring.views import View, check_views, views_of

BOARDS = ("open", "closed")
"""The two boards of a phase: while it is not closed, and after it closes (picked at read time)."""
CELLS_VERSION = 6
"""Bump when what a cell holds changes (e.g. a new visibility rule): every phase's cells are recomputed."""
HEADTAIL_DEFAULT = "accuracy"
TABLE5_METRICS = ("accuracy", "answer_rate")
"""What the head/tail section shows side by side for head and tail (CoLoTa's Table 5 layout)."""
CURVE_ONLY = frozenset({"aurc"})
"""Overall metrics summarised by a curve on the submission page rather than shown as a default column."""
PAIR_KEYS = (*PAIR_SHARES, "n_pairs")
LAYOUT_CACHE = "board_specs"
LAYOUT_CACHE_SIZE = 64


@dataclass(frozen=True)
class BoardLayout:
    """A phase's views and every metric path its board keeps per score."""

    views: tuple[View, ...]
    primary: str
    overall: tuple[str, ...]  # the overall metrics the default view shows as columns
    buckets: tuple[str, ...]  # popularity buckets of the label set, head first
    headtail_metric: str
    breakdowns: tuple[tuple[str, tuple[str, ...]], ...]  # (field, its values) of the config's breakdowns
    pairs: bool
    n_public: int  # items on the public split (all items without splits)
    n_primary: int  # public items of the primary metric's slice: the ladder's default step (probing.default_step)
    paths: tuple[str, ...]
    ranked: frozenset[str]  # the views' metrics: shown to 4 decimals, as a ranking needs
    signature: str

    def columns(self, view_index: int) -> tuple[str, ...]:
        """Return the columns of a view: its own, or for a view listing none the other overall metrics."""
        view = self.views[view_index]
        if view.columns:
            return tuple(c for c in view.columns if c != view.metric)
        return tuple(m for m in self.overall if m != view.metric)

    def headtail_paths(self) -> tuple[str, ...]:
        """Return the Table 5 paths: accuracy and answer rate per bucket, then the gap of the head/tail metric."""
        paths = [f"popularity.{b}.{m}" for b in self.buckets for m in TABLE5_METRICS]
        if {"head", "tail"} <= set(self.buckets):
            paths.append(f"popularity.gap.{self.headtail_metric}")
        return tuple(paths)

    def breakdown_paths(self, field: str) -> tuple[str, ...]:
        """Return the head/tail metric of each value of a breakdown field."""
        values = dict(self.breakdowns).get(field, ())
        return tuple(f"breakdowns.{field}.{value}.{self.headtail_metric}" for value in values)


def phase_views(phase: Phase) -> tuple[View, ...]:
    """Return the views of a phase: those of its config, else the default view by its primary metric."""
    return views_of(check_views((phase.task_config or {}).get("views")), primary_metric=phase.primary_metric)


def headtail_metric(primary: str) -> str:
    """Return the metric head/tail and breakdown tables show: the primary path's metric if it has an interval.

    Accuracy instead for a metric participants see in no small slice (visibility.SENSITIVE_KEYS: one answer
    moves F1 there by more than a step), so the tables show them figures, not blanks.
    """
    try:
        metric = METRICS.get(resolve_path(primary).metric)
    except KeyError:
        metric = None
    usable = (metric is not None and metric.has_ci and metric.name not in SENSITIVE_KEYS
              and metric.table != "pairs")  # a pair metric has no value per bucket or breakdown value
    return metric.name if metric is not None and usable else HEADTAIL_DEFAULT


def cached_layout(ctx: ServiceContext, phase: Phase) -> BoardLayout:
    """Return board_layout of the phase, kept per process while its label file and config stay the same."""
    key = (ctx.settings.database_url, phase.id, phase.labels_sha256, phase.has_private_split,
           json.dumps(phase.task_config, sort_keys=True))
    cache: dict[Any, BoardLayout] = ctx.runtime.caches.setdefault(LAYOUT_CACHE, {})  # type: ignore[assignment]
    layout = cache.get(key)
    if layout is None:
        layout = board_layout(ctx, phase)
        if len(cache) >= LAYOUT_CACHE_SIZE:
            cache.pop(next(iter(cache)), None)
        cache[key] = layout
    return layout


def board_layout(ctx: ServiceContext, phase: Phase) -> BoardLayout:
    """Return what the phase's board shows, from its config and its label set."""
    labels = load_phase_labels(ctx, phase)
    views, primary = phase_views(phase), phase.primary_metric
    overall = _overall_metrics(labels)
    codes = {int(code) for code in np.unique(labels.popularity)}
    buckets = tuple(BUCKET_NAMES[c] for c in sorted(BUCKET_NAMES, reverse=True) if c in codes)
    breakdowns = tuple((name, tuple(m.values)) for name, m in labels.memberships.items()
                       if name in labels.config.breakdowns)
    pairs = bool(len(labels.pairs)) and bool((labels.pairs >= 0).any())
    ht = headtail_metric(primary)
    n_public = int((labels.split == 0).sum()) if labels.has_split else labels.n
    paths = dict.fromkeys([primary, *(p for v in views for p in v.paths), *overall])
    paths.update(dict.fromkeys(f"popularity.{b}.{m}" for b in buckets for m in dict.fromkeys((*TABLE5_METRICS, ht))))
    if {"head", "tail"} <= set(buckets):
        paths.update(dict.fromkeys((f"popularity.gap.{ht}", f"popularity.relative_drop.{ht}")))
    paths.update(dict.fromkeys(f"breakdowns.{f}.{v}.{ht}" for f, values in breakdowns for v in values))
    if pairs:
        paths.update(dict.fromkeys(f"pairs.{key}" for key in PAIR_KEYS))
    listed = tuple(paths)
    return BoardLayout(views=views, primary=primary, overall=overall, buckets=buckets, headtail_metric=ht,
                     breakdowns=breakdowns, pairs=pairs, n_public=n_public,
                     n_primary=slice_items(labels, primary), paths=listed,
                     ranked=frozenset(v.metric for v in views), signature=_signature(phase, listed))


def slice_items(labels: LabelSet, path: str) -> int:
    """Return how many public items (every item without splits) the slice of a metric path holds.

    A gap or relative drop counts its smaller bucket: one answer moves it as much as it
    moves that bucket.
    """
    public = labels.split == 0 if labels.has_split else np.ones(labels.n, dtype=bool)
    parts = path.split(".")
    if len(parts) == 1 or parts[0] == "pairs":
        return int(public.sum())
    if parts[0] == "popularity":
        codes = {name: code for code, name in BUCKET_NAMES.items()}
        names = ("head", "tail") if parts[1] in ("gap", "relative_drop") else (parts[1],)
        return min(int((public & (labels.popularity == codes[name])).sum()) for name in names)
    membership = labels.memberships.get(parts[1])
    value = ".".join(parts[2:-1])
    if membership is None or value not in membership.values:
        return int(public.sum())
    rows = membership.items[membership.codes == membership.values.index(value)]
    return int(public[rows].sum())


def _overall_metrics(labels: LabelSet) -> tuple[str, ...]:
    """Return the overall metrics a board shows for this task (F1 is macro-F1 for multiple choice)."""
    skip = set(CURVE_ONLY)
    if labels.config.task_type == "multiple_choice":
        skip.add("f1")
    if not (len(labels.groups) and (labels.groups >= 0).any()):
        skip.add("group_accuracy")
    producible = Producible(labels)
    return tuple(name for name in METRICS if name not in skip and producible.metric(name))


def _signature(phase: Phase, paths: tuple[str, ...]) -> str:
    """Return a digest of what the board depends on besides the scores: views, paths, settings, splits, labels."""
    basis = {"paths": paths, "probing": asdict(probing_settings(phase)), "private": phase.has_private_split,
             "labels": phase.labels_sha256, "views": [v.to_json() for v in phase_views(phase)],
             "selections": (phase.task_config or {}).get("final_selections"), "version": CELLS_VERSION}
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def path_label(path: str) -> str:
    """Return a metric path as people read it, e.g. 'Accuracy · tail' or 'F1 · category = science'."""
    parts = path.split(".")
    if len(parts) == 1:
        return _metric_text(parts[0])
    if parts[0] == "pairs":
        return f"Pairs: {PAIR_SHARES.get(parts[1], parts[1].replace('_', ' ')).lower()}"
    metric = _metric_text(parts[-1])
    if parts[0] == "popularity":
        kind = {"gap": "head − tail gap", "relative_drop": "head − tail relative drop"}.get(parts[1], parts[1])
        return f"{metric} · {kind}"
    return f"{metric} · {parts[1]} = {'.'.join(parts[2:-1])}"


def _metric_text(name: str) -> str:
    """Return the registry label of a metric, or the name spelled out."""
    try:
        return metric_label(name)
    except KeyError:
        return name.replace("_", " ").capitalize()
