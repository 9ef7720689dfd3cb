"""What every importer makes: report entries, the conversion, the phase config, and the rules it must keep.

An importer reads a whole source (``scoring.importers.sources``) into a ``Conversion``
(output records, phase config, one report entry per record) before anything is
written (``scoring.importers.outputs``), so a source that is not in the expected
format leaves OUTDIR untouched.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scoring.public_fields import check_public_fields, public_field_names
from scoring.types import ScoringError

Action = Literal["kept", "changed", "skipped"]
Record = dict[str, Any]

QUESTIONS = "questions.jsonl"
LABELS = "labels.jsonl"
PHASE = "phase.json"
REPORT = "report.jsonl"
TRAIN = "train.jsonl"
OUTPUT_NAMES = (QUESTIONS, LABELS, PHASE, REPORT, TRAIN)

# What a questions file may carry is scoring.public_fields' allow list, the one the platform
# derives questions with: each importer names its question text fields in phase.json's
# "public_fields"; anything else (CoLoTa's kg_triples, which state the facts the answer
# follows from, or its original, which links to an original whose answer is public) stays out.


class ImporterError(ScoringError):
    """An import that cannot run; ``exit_code`` is what the command line returns."""

    exit_code = 3


class SourceFormatError(ImporterError):
    """SOURCE (or a file named by an option) is not in the format the importer expects."""


class OutputError(ImporterError):
    """OUTDIR cannot be written."""


class ImportUsageError(ImporterError):
    """Unknown format, or an option the format does not take."""

    exit_code = 2


@dataclass(frozen=True)
class ReportEntry:
    """What the import did with one source record (or one item made from it)."""

    action: Action
    source_id: str | None
    id: str | None
    reason: str | None = None
    line: int | None = None  # 1-based line, for JSON Lines and CSV sources
    index: int | None = None  # 0-based position, for JSON array sources
    file: str | None = None  # set for records of a secondary file (an option's CSV)

    def to_json(self) -> Record:
        """Return the entry as one report.jsonl object."""
        where: Record = {"line": self.line} if self.line is not None else {"index": self.index}
        out = {**where, "source_id": self.source_id, "id": self.id,
               "action": self.action, "reason": self.reason}
        if self.file is not None:
            out["file"] = self.file
        return out

    def describe(self) -> str:
        """Return the entry as one readable line."""
        where = f"line {self.line}" if self.line is not None else f"index {self.index}"
        if self.file is not None:
            where = f"{self.file} {where}"
        text = f"{where}: {self.source_id} -> {self.id or '-'} {self.action}"
        return f"{text}: {self.reason}" if self.reason else text


@dataclass
class Conversion:
    """What an importer made of its source, before anything is written."""

    entries: list[ReportEntry] = field(default_factory=list)
    files: dict[str, list[Record]] = field(default_factory=dict)  # name -> JSONL records
    phase: Record | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportReport:
    """The outcome of one import: every report entry, file-level notes, files written."""

    fmt: str
    source: Path
    outdir: Path
    entries: tuple[ReportEntry, ...]
    notes: tuple[str, ...]
    written: tuple[tuple[str, int | None], ...]  # (file name, JSONL record count or None)

    @property
    def kept(self) -> int:
        """Return the number of entries kept unchanged."""
        return sum(e.action == "kept" for e in self.entries)

    @property
    def changed(self) -> int:
        """Return the number of entries kept with a normalized value."""
        return sum(e.action == "changed" for e in self.entries)

    @property
    def skipped(self) -> int:
        """Return the number of entries left out of the outputs."""
        return sum(e.action == "skipped" for e in self.entries)

    def summary(self) -> str:
        """Return the one-line summary printed after the report."""
        noted = sum(e.reason is not None for e in self.entries if e.action == "kept")
        files = ", ".join(name if n is None else f"{name} ({n})" for name, n in self.written)
        return (f"{self.fmt} {self.source.name}: kept {self.kept} ({noted} with a note), "
                f"changed {self.changed}, skipped {self.skipped}; wrote {files} to {self.outdir}")


def entry(action: Action, source_id: Any, item_id: str | None, notes: list[str] | None = None,
          **where: Any) -> ReportEntry:
    """Build a report entry; ``notes`` are joined into its reason."""
    reason = "; ".join(notes) if notes else None
    sid = None if source_id is None else str(source_id)
    return ReportEntry(action=action, source_id=sid, id=item_id, reason=reason, **where)


def phase_config(task_type: str, *, breakdowns: list[str], public_fields: list[str],
                 options: list[str] | None = None, popularity: Record | None = None,
                 primary_metric: str = "accuracy", views: list[Record] | None = None) -> Record:
    """Return a phase config (docs/FORMATS.md); public_fields names the question fields besides the allow list."""
    config: Record = {"task_type": task_type}
    if options is not None:
        config["options"] = options
    config.update(primary_metric=primary_metric, breakdowns=breakdowns)
    if popularity is not None:
        config["popularity"] = popularity
    config["missing_ids"] = "abstain"
    config["public_fields"] = list(check_public_fields(public_fields, breakdowns=breakdowns))
    if views:
        config["views"] = views
    return config


def view(name: str, metric: str, columns: list[str]) -> Record:
    """Return one leaderboard view of a phase config (docs/FORMATS.md, Leaderboard views)."""
    return {"name": name, "metric": metric, "columns": columns}


def question_fields(phase: Record | None) -> frozenset[str]:
    """Return the fields a questions record may carry under an importer's phase config."""
    if phase is None:
        return public_field_names()
    return public_field_names(breakdowns=phase.get("breakdowns", ()), marked=phase.get("public_fields", ()))


def check_conversion(conv: Conversion) -> None:
    """Raise RuntimeError if a conversion breaks the label-file or public-file rules."""
    labels = conv.files.get(LABELS, [])
    counts = Counter(r["id"] for r in labels)
    repeated = [i for i, n in counts.items() if n > 1]
    if repeated or any("label" not in r for r in labels):
        raise RuntimeError(f"importer bug: label ids repeated or labels missing {repeated[:5]}")
    questions = conv.files.get(QUESTIONS, [])
    leaked = {k for r in questions for k in r} - question_fields(conv.phase)
    if leaked:
        raise RuntimeError(f"importer bug: questions carry {sorted(leaked)}, which are not public")
    if LABELS in conv.files and [r["id"] for r in questions] != [r["id"] for r in labels]:
        raise RuntimeError("importer bug: questions and labels list different ids")
