"""What the platform hands the exports (docs/MOVING.md): one phase's board as shown, in small frozen values.

Nothing here knows the web application: the platform fills these from a board it may
show to the reader (same visibility rules as the page), and every figure arrives as it
is shown there. A figure is **exact** unless it says otherwise: ``step`` is the grid a
coarse figure is shown on (docs/PROBING.md: noise drawn from the file's answers, or the
ladder's rounding when ``noisy`` is false). The exports never make a coarse figure look
exact, and never make one up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from scoring.metrics.paths import resolve_path
from scoring.types import ScoringError, TaskType

MetadataValue = str | int | float | bool
SplitName = Literal["public", "private"]


class ExportError(ScoringError):
    """Board data the exports cannot turn into a record; the message names the entry, path or field."""


@dataclass(frozen=True)
class Figure:
    """One figure of an entry as the board shows it: its value, 95% interval, and grid step if coarse.

    ``step`` None: exact. A number: shown on that grid, so the exact value is not known
    to the reader; ``noisy`` says whether the figure also carries docs/PROBING.md's
    noise (a slice figure) or is only rounded (the ladder's released value).
    """

    value: float
    ci: tuple[float, float] | None = None
    step: float | None = None
    noisy: bool = True

    def __post_init__(self) -> None:
        if not _finite(self.value):
            raise ExportError(f"a figure's value must be a finite number, not {self.value!r}")
        if self.ci is not None and not (len(self.ci) == 2 and all(map(_finite, self.ci))
                                        and self.ci[0] <= self.ci[1]):
            raise ExportError(f"a figure's interval must be [lo, hi] with lo <= hi, not {self.ci!r}")
        if self.step is not None and not (_finite(self.step) and self.step > 0):
            raise ExportError(f"a coarse figure's step must be a positive number, not {self.step!r}")

    @property
    def exact(self) -> bool:
        """Return whether the board shows this figure exact (no grid step)."""
        return self.step is None


@dataclass(frozen=True)
class ExportPhase:
    """The phase and board being exported: competition, phase, the shown split, and what is ranked and shown.

    ``ranking_metric`` is the metric path the view ranks by; ``columns`` the other metric
    paths the board shows (slices: head/tail, categories, gaps, pairs), in the order to
    export them. ``labels`` maps a path to the name the board gives it (the path itself
    when absent). ``split`` is the split the board shows (None: the phase has no private
    split). ``hf_dataset`` is the benchmark's dataset id on the Hugging Face Hub, if any.
    """

    competition_slug: str
    competition_title: str
    competition_url: str
    phase_id: int
    phase_name: str
    phase_url: str
    task_type: TaskType
    split: SplitName | None
    closed: bool
    ranking_metric: str
    columns: tuple[str, ...] = ()
    view_name: str = "Overall"
    labels: Mapping[str, str] = field(default_factory=dict)
    hf_dataset: str | None = None
    platform_name: str = "Tailboard"
    library_version: str = "unknown"

    def __post_init__(self) -> None:
        for name in ("competition_slug", "competition_title", "competition_url", "phase_name", "phase_url",
                     "platform_name", "library_version"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ExportError(f"the phase's {name} must be a non-empty string")
        if self.task_type not in ("binary", "multiple_choice"):
            raise ExportError(f"task_type must be binary or multiple_choice, not {self.task_type!r}")
        if self.split not in (None, "public", "private"):
            raise ExportError(f"split must be public, private or None, not {self.split!r}")
        for path in (self.ranking_metric, *self.columns):
            resolve_path(path)  # an unknown path raises UnknownMetricError listing the valid ones

    @property
    def paths(self) -> tuple[str, ...]:
        """Return the exported metric paths: the ranking metric first, then the columns, each once."""
        return tuple(dict.fromkeys((self.ranking_metric, *self.columns)))

    def label(self, path: str) -> str:
        """Return the name the board shows for a metric path."""
        return self.labels.get(path) or path


@dataclass(frozen=True)
class ExportEntry:
    """One row of the board: an entry's shown submission, who it is, and its figures by metric path.

    ``rank`` and ``stat_rank`` are None for baselines (placed by value, not ranked) and
    where the board gives none. ``team`` is None for a user without a team (then
    ``display_name`` names the user). ``metadata`` holds docs/ENTRIES.md's keys and ``model_id``.
    ``submitted_at`` must carry its time zone (the exports write UTC).
    """

    rank: int | None
    stat_rank: int | None
    display_name: str
    team: str | None
    method: str
    metadata: Mapping[str, MetadataValue]
    submitted_at: datetime
    submission_id: int
    figures: Mapping[str, Figure]
    is_baseline: bool = False
    builtin: bool = False  # a baseline the platform computes itself (random, majority, all-yes)

    def __post_init__(self) -> None:
        check_aware(self.submitted_at, what=f"submission {self.submission_id}: submitted_at")
        if not self.display_name.strip() or not self.method.strip():
            raise ExportError(f"submission {self.submission_id}: display_name and method must not be empty")

    @property
    def model_id(self) -> str | None:
        """Return the entry's declared model id (``metadata.model_id``), None when absent or blank."""
        value = self.metadata.get("model_id")
        return value.strip() or None if isinstance(value, str) else None


def check_aware(moment: datetime, *, what: str) -> None:
    """Raise ExportError unless a time carries its time zone (the exports write UTC and never guess one)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ExportError(f"{what} must carry a time zone (UTC)")


def _finite(value: object) -> bool:
    """Return whether a value is a real, finite number (booleans are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
