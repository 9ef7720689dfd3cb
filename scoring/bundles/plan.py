"""What a competition bundle becomes (docs/MOVING.md): a plan of data, nothing written.

``read_bundle`` returns a ``BundlePlan``: the competition's title, description and
pages, one ``PhasePlan`` per phase that can be carried over (its dates in UTC, its
limits, its label file in Tailboard's format and its checked phase config), and the
report: one ``ReportLine`` per thing carried over (what became what) or left behind
(and why). The platform shows the report as the import preview and creates the
competition from the plan once the organizer confirms.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from scoring.labels import LabelSet, load_labels
from scoring.types import ScoringError

BundleFormat = Literal["codalab", "codabench"]
PageFormat = Literal["markdown", "html", "text"]
Status = Literal["carried", "not carried"]


@dataclass(frozen=True)
class ReportLine:
    """One line of the import report: something carried over (what became what), or left behind and why."""

    status: Status
    text: str

    def __str__(self) -> str:
        return f"{self.status}: {self.text}"


@dataclass(frozen=True)
class Page:
    """A page of the competition (overview, evaluation, terms, ...): its title and content as written."""

    title: str
    content: str
    format: PageFormat
    source: str  # the file of the bundle it comes from


@dataclass(frozen=True)
class PhasePlan:
    """A phase to create: dates in UTC (None: not given), limits (None: not given), labels and config.

    ``labels`` is a label file in Tailboard's format (JSON Lines ``{"id", "label"}``),
    ``config`` a phase config object (JSON-ready) that ``scoring.load_config`` accepts
    with those labels; ``load()`` builds the label set from both.
    """

    position: int  # 1-based order in the competition
    name: str
    description: str
    start: datetime | None
    end: datetime | None
    max_per_day: int | None
    max_total: int | None
    labels: bytes
    n_items: int
    config: dict[str, Any]
    source: str  # the reference file the labels come from

    def load(self) -> LabelSet:
        """Return the label set of this phase (its labels checked under its config)."""
        return load_labels(self.labels, self.config)


@dataclass(frozen=True)
class BundlePlan:
    """A competition bundle read into what Tailboard would create, and the report of the reading."""

    format: BundleFormat
    title: str
    description: str
    pages: tuple[Page, ...]
    phases: tuple[PhasePlan, ...]
    report: tuple[ReportLine, ...]

    def report_lines(self) -> list[str]:
        """Return the report as text lines ('carried: ...', 'not carried: ...'), in reading order."""
        return [str(line) for line in self.report]


class BundleError(ScoringError):
    """The bundle cannot be imported at all; ``report`` holds what was read before giving up.

    The message and the report name files of the bundle and quote its settings, never
    label values; they are for the organizer who uploaded it.
    """

    def __init__(self, message: str, report: tuple[ReportLine, ...] = ()) -> None:
        super().__init__(message)
        self.report = report
