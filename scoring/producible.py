"""The metric paths a label file can produce (docs/METRICS.md, Metric paths), checked when a phase is created or edited.

``popularity.tail.accuracy`` needs tail items; ``popularity.gap.*`` head and tail
items; ``breakdowns.category.geo.f1`` the field among the config's breakdowns and an
item with that value; ``pairs.*`` pairs; ``group_accuracy`` groups; ``macro_f1_fixed``
a multiple-choice task; ``avg_macro_f1`` that and a complete head/tail pair. Metrics
computed from the participant's confidences (``ece``, ``aurc``) need nothing of the
labels.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from scoring.labels.labelset import LabelSet
from scoring.metrics.pairs import has_complete_pair
from scoring.metrics.paths import DIFFERENCES
from scoring.metrics.registry import COUNT_LABELS, METRICS, PAIR_SHARES
from scoring.types import BUCKET_NAMES, LabelFileError


def check_paths(labels: LabelSet, paths: Iterable[str]) -> None:
    """Raise LabelFileError listing the valid paths when the label set cannot produce one of paths."""
    producible = Producible(labels)
    missing = [p for p in paths if not producible.has(p)]
    if missing:
        raise LabelFileError(
            f"phase config: the label file cannot produce the metric path(s) {missing}; "
            f"valid paths for this label file: {', '.join(producible.listing())}"
        )


class Producible:
    """What a label set has data for: popularity buckets, breakdown values, groups, pairs."""

    def __init__(self, labels: LabelSet) -> None:
        self.buckets = {BUCKET_NAMES[int(code)] for code in np.unique(labels.popularity) if int(code) in BUCKET_NAMES}
        self.values = {name: set(m.values) for name, m in labels.memberships.items()
                       if name in labels.config.breakdowns}
        self.groups = bool(len(labels.groups)) and bool((labels.groups >= 0).any())
        self.pairs = bool(len(labels.pairs)) and bool((labels.pairs >= 0).any())
        self.multiple_choice = labels.config.task_type == "multiple_choice"
        self.complete_pairs = self.multiple_choice and has_complete_pair(labels.pairs, labels.popularity)

    def metric(self, name: str) -> bool:
        """Return whether a slice of this label set can carry metric name (a count always can)."""
        metric = METRICS.get(name)
        if metric is None:
            return True
        if metric.multiple_choice_only and not self.multiple_choice:
            return False
        if metric.table == "groups":
            return self.groups
        return self.complete_pairs if metric.table == "pairs" else True

    def has(self, path: str) -> bool:
        """Return whether path names a number this label set can produce (its shape already checked)."""
        parts = path.split(".")
        name = parts[-1]
        if parts[0] == "pairs":
            return self.pairs and len(parts) == 2
        if len(parts) == 1:
            return self.metric(name) and (name in METRICS or name in COUNT_LABELS)
        if parts[0] == "popularity" and parts[1] in DIFFERENCES:
            return {"head", "tail"} <= self.buckets and self.metric(name)
        if parts[0] == "popularity":
            return parts[1] in self.buckets and self.metric(name)
        field, value = parts[1], ".".join(parts[2:-1])
        return value in self.values.get(field, set()) and self.metric(name)

    def paths(self) -> list[str]:
        """Return every valid path, spelled out: what listing() abbreviates, for a picker (issue 20)."""
        metrics = [m for m in METRICS if self.metric(m)]
        slice_metrics = [m for m in metrics if METRICS[m].table != "pairs"]
        out = list(metrics)
        out += [f"popularity.{b}.{m}" for b in ("head", "torso", "tail") if b in self.buckets for m in slice_metrics]
        if {"head", "tail"} <= self.buckets:
            out += [f"popularity.{d}.{m}" for d in DIFFERENCES for m in slice_metrics if METRICS[m].has_ci]
        for field, values in sorted(self.values.items()):
            out += [f"breakdowns.{field}.{v}.{m}" for v in sorted(values) for m in slice_metrics]
        if self.pairs:
            out += [f"pairs.{share}" for share in PAIR_SHARES]
        return [path for path in out if self.has(path)]

    def listing(self) -> list[str]:
        """Return the valid paths, short: one pattern per family, with this file's values."""
        metrics = [m for m in METRICS if self.metric(m)]
        out = list(metrics)
        metrics = [m for m in metrics if METRICS[m].table != "pairs"]  # overall only
        every = "|".join(metrics)
        for bucket in ("head", "torso", "tail"):
            if bucket in self.buckets:
                out.append(f"popularity.{bucket}.<{every}>")
        if {"head", "tail"} <= self.buckets:
            with_ci = "|".join(m for m in metrics if METRICS[m].has_ci)
            out.extend(f"popularity.{d}.<{with_ci}>" for d in DIFFERENCES)
        for field, values in sorted(self.values.items()):
            shown = sorted(values)
            more = f"|... ({len(shown)} values)" if len(shown) > 10 else ""
            out.append(f"breakdowns.{field}.<{'|'.join(shown[:10])}{more}>.<{every}>")
        if self.pairs:
            out.append(f"pairs.<{'|'.join(PAIR_SHARES)}>")
        return out
