"""A competition.yaml read into one shape for both formats, before any file of the bundle is opened.

``scoring.bundles.codalab`` (CodaLab, v1) and ``scoring.bundles.codabench`` (Codabench,
v2) each turn their yaml into a ``Draft``; ``scoring.bundles.build`` then reads the files
it names. Values are already plain: text, UTC datetimes, whole numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from scoring.bundles.dates import to_utc
from scoring.bundles.plan import BundleFormat, ReportLine


@dataclass(frozen=True)
class Column:
    """A leaderboard column: the key the scoring program writes, its title, its sorting, and whether it is derived."""

    key: str
    title: str
    sorting: str  # "desc" (higher is better) or "asc"
    computed: str | None = None  # how a computed column derives from others ("avg of 2 columns")


@dataclass(frozen=True)
class Task:
    """What one phase scores: reference data, scoring and ingestion programs (paths in the bundle)."""

    name: str
    reference: str | None
    scoring: str | None
    ingestion: str | None
    server_key: str | None = None  # a Codabench task kept on its server, not in the bundle


@dataclass
class PhaseDraft:
    """A phase as the yaml gives it, with the notes of reading it."""

    name: str
    description: str
    start: datetime | None
    end: datetime | None
    max_per_day: int | None
    max_total: int | None
    tasks: list[Task]
    notes: list[ReportLine] = field(default_factory=list)


@dataclass
class Draft:
    """A competition.yaml of either format, in one shape."""

    format: BundleFormat
    title: str
    description: str
    pages: list[tuple[str, str]]  # (title, path)
    phases: list[PhaseDraft]
    columns: list[Column]
    notes: list[ReportLine] = field(default_factory=list)


def text(value: object) -> str:
    """Return a yaml scalar as text ('' for none); a list or mapping only by its size.

    YAML aliases can make a small file hold a structure of billions of elements; such
    a value is never turned into text whole.
    """
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return f"({'a list' if isinstance(value, list) else 'a mapping'} of {len(value)})"
    return str(value).strip()


def whole(value: object) -> int | None:
    """Return a positive whole number, or None for none, zero, or anything else."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def date_of(value: object, what: str, notes: list[ReportLine]) -> datetime | None:
    """Return a yaml date as UTC, noting (and returning None for) one that cannot be read."""
    try:
        return to_utc(value)
    except ValueError as error:
        notes.append(ReportLine("not carried", f"{what}: {error}; the phase is imported without it"))
        return None


def not_carried(notes: list[ReportLine], found: dict[str, object], reasons: dict[str, str], where: str) -> None:
    """Note each key of found that reasons names (it is in the yaml and Tailboard does not take it)."""
    for key, reason in reasons.items():
        if found.get(key) not in (None, "", [], {}, False):
            notes.append(ReportLine("not carried", f"{where}{key} {text(found[key])!r}: {reason}"))
