"""The one registry of metrics: name, label shown to people, direction, interval, and the table read.

Everything that names a metric (the phase config, the result object, the web pages,
the command-line client) takes it from here; an unknown name is an error that lists
the valid ones, never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from scoring.metrics import formulas
from scoring.metrics.counts import CountArray, FloatArray, SliceCounts
from scoring.types import ScoringError

Table = Literal["cells", "groups", "calibration", "ranking", "pairs"]


class UnknownMetricError(ScoringError, KeyError):
    """A metric name or path the registry does not know; the message lists the valid ones."""

    def __str__(self) -> str:
        """Return the message itself (KeyError would quote it)."""
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Metric:
    """A registered metric: its function, label, direction, interval, and the table it reads.

    ``fraction``, when set, returns the integer counts the metric divides, whose
    denominator is the slice's item count (the same in every bootstrap resample): the
    intervals then sort integer counts instead of floats (the same numbers, cheaper).
    ``multiple_choice_only`` metrics are left out of yes/no tasks. A ``pairs`` metric is
    computed on the overall slice (of the file and of each split) only, and its interval
    resamples whole pairs (``scoring.metrics.pair_bootstrap``).
    """

    name: str
    label: str
    fn: Callable[[SliceCounts], FloatArray]
    higher_is_better: bool
    table: Table
    has_ci: bool
    fraction: Callable[[SliceCounts], tuple[CountArray, CountArray]] | None = None
    multiple_choice_only: bool = False

    def applies(self, counts: SliceCounts) -> bool:
        """Return whether the slice has the table this metric reads (and the task it needs)."""
        if self.multiple_choice_only and counts.binary:
            return False
        if self.table == "pairs":
            return counts.pairs is not None
        if self.table == "groups":
            return counts.groups is not None
        if self.table == "calibration":
            return counts.calibration is not None
        if self.table == "ranking":
            return counts.ranking is not None
        return True


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accuracy", "Accuracy", formulas.accuracy, True, "cells", True, formulas.accuracy_fraction),
        Metric("answer_rate", "Answer rate", formulas.answer_rate, True, "cells", True, formulas.answer_rate_fraction),
        Metric("selective_accuracy", "Selective accuracy", formulas.selective_accuracy, True, "cells", True),
        Metric("f1", "F1", formulas.f1, True, "cells", True),
        Metric("macro_f1", "Macro-F1", formulas.macro_f1, True, "cells", True),
        Metric("macro_f1_fixed", "Macro-F1 (every option)", formulas.macro_f1_fixed, True, "cells", True,
               multiple_choice_only=True),
        Metric("avg_macro_f1", "Avg macro-F1 (head, tail)", formulas.avg_macro_f1, True, "pairs", True,
               multiple_choice_only=True),
        Metric("group_accuracy", "Group accuracy", formulas.group_accuracy, True, "groups", True),
        Metric("ece", "ECE", formulas.ece, False, "calibration", False),
        Metric("aurc", "AURC", formulas.aurc, False, "ranking", False),
    )
}
"""Every metric by name, in the order slice objects list them."""

COUNT_LABELS: Mapping[str, str] = {"n": "Items", "answered": "Answered", "correct": "Correct"}
"""The counts every slice object carries beside its metrics (no direction, no interval)."""

PAIR_SHARES: Mapping[str, str] = {
    "both_correct": "Both correct", "head_only": "Head only", "tail_only": "Tail only", "neither": "Neither",
}
"""The shares of head/tail pairs in a result's ``pairs`` object (docs/METRICS.md, Slices), in its order."""
PAIR_COUNT_LABELS: Mapping[str, str] = {"n_pairs": "Pairs", "incomplete_pairs": "Incomplete pairs"}


def get_metric(name: str) -> Metric:
    """Return the registered metric called ``name``, or raise UnknownMetricError naming the valid ones."""
    try:
        return METRICS[name]
    except (KeyError, TypeError):
        raise UnknownMetricError(f"unknown metric {name!r}; valid metrics: {', '.join(METRICS)}") from None


def metric_label(name: str) -> str:
    """Return the name people read for a metric, count or pair share (``"f1"`` -> ``"F1"``)."""
    for table in ({m.name: m.label for m in METRICS.values()}, COUNT_LABELS, PAIR_SHARES, PAIR_COUNT_LABELS):
        if name in table:
            return table[name]
    known = [*METRICS, *COUNT_LABELS, *PAIR_SHARES, *PAIR_COUNT_LABELS]
    raise UnknownMetricError(f"unknown metric {name!r}; valid names: {', '.join(known)}")


def point_values(counts: SliceCounts) -> dict[str, float | None]:
    """Return every applicable metric of one slice, None where it is null."""
    out: dict[str, float | None] = {}
    for metric in METRICS.values():
        if metric.applies(counts):
            value = float(metric.fn(counts))
            out[metric.name] = None if np.isnan(value) else value
    return out
