"""Shared pieces of the importers: report entries, conversions, readers and atomic writes.

An importer reads a whole source into a ``Conversion`` (output records, phase config,
one report entry per record) before anything is written, so a source that is not in
the expected format leaves OUTDIR untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scoring.types import ScoringError

Action = Literal["kept", "changed", "skipped"]
Record = dict[str, Any]

QUESTIONS = "questions.jsonl"
LABELS = "labels.jsonl"
PHASE = "phase.json"
REPORT = "report.jsonl"
TRAIN = "train.jsonl"
OUTPUT_NAMES = (QUESTIONS, LABELS, PHASE, REPORT, TRAIN)

FORBIDDEN_QUESTION_KEYS = frozenset(
    {"label", "labels", "gt", "answer", "explanation", "inference_rule", "reasoning_steps",
     "kg_triples", "original"}
)
"""Keys a public questions file never carries: the label, and fields that give it away.

``kg_triples`` (CoLoTa) state the facts the answer is derived from, and ``original``
links a CoLoTa item to a popular original whose answer is public elsewhere.
"""


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


def phase_config(task_type: str, *, breakdowns: list[str], options: list[str] | None = None,
                 popularity: Record | None = None) -> Record:
    """Return a SPEC §2.2 phase config."""
    config: Record = {"task_type": task_type}
    if options is not None:
        config["options"] = options
    config.update(primary_metric="accuracy", breakdowns=breakdowns)
    if popularity is not None:
        config["popularity"] = popularity
    config["missing_ids"] = "abstain"
    return config


def read_text(path: Path) -> str:
    """Return a source file's text (UTF-8, BOM allowed) or raise SourceFormatError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceFormatError(f"{path.name} is not UTF-8 text (byte {exc.start})") from exc


def read_json_lines(path: Path, what: str, *, parse_constant: Any = None) -> list[tuple[int, Any]]:
    """Return (1-based line, value) for every non-blank line of a JSON Lines file."""
    text = read_text(path)
    if text.lstrip().startswith("["):
        raise SourceFormatError(f"{path.name} is one JSON array; {what} files are JSON Lines")
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line, parse_constant=parse_constant)))
        except json.JSONDecodeError as exc:
            raise SourceFormatError(
                f"{path.name} line {number} is not JSON ({exc.msg}); expected {what} JSON Lines"
            ) from exc
    if not out:
        raise SourceFormatError(f"{path.name} has no records")
    return out


def read_json_array(path: Path, what: str) -> list[Any]:
    """Return the elements of a file that holds one JSON array."""
    try:
        value = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise SourceFormatError(
            f"{path.name} is not one JSON document (line {exc.lineno}: {exc.msg}); "
            f"{what} files are one JSON array"
        ) from exc
    if not isinstance(value, list):
        raise SourceFormatError(f"{path.name} holds a JSON {type(value).__name__}, "
                                f"not the JSON array of a {what} file")
    if not value:
        raise SourceFormatError(f"{path.name} has no records")
    return value


def require_keys(records: list[tuple[int, Any]], keys: tuple[str, ...], what: str, *,
                 name: str, unit: str) -> None:
    """Raise SourceFormatError unless every record is an object with ``keys``."""
    for where, record in records:
        if not isinstance(record, dict):
            raise SourceFormatError(f"{name} {unit} {where} is not a JSON object; "
                                    f"not a {what} file")
        missing = [k for k in keys if k not in record]
        if missing:
            raise SourceFormatError(f"{name} {unit} {where} has no {', '.join(missing)}; "
                                    f"not a {what} file")


def first_seen(ids: list[str]) -> dict[str, int]:
    """Map each id to the position of its first occurrence in ``ids``."""
    seen: dict[str, int] = {}
    for position, item_id in enumerate(ids):
        seen.setdefault(item_id, position)
    return seen


def check_conversion(conv: Conversion) -> None:
    """Raise RuntimeError if a conversion breaks the label-file or public-file rules."""
    labels = conv.files.get(LABELS, [])
    counts = Counter(r["id"] for r in labels)
    repeated = [i for i, n in counts.items() if n > 1]
    if repeated or any("label" not in r for r in labels):
        raise RuntimeError(f"importer bug: label ids repeated or labels missing {repeated[:5]}")
    questions = conv.files.get(QUESTIONS, [])
    leaked = {k for r in questions for k in r} & FORBIDDEN_QUESTION_KEYS
    if leaked:
        raise RuntimeError(f"importer bug: questions carry {sorted(leaked)}")
    if LABELS in conv.files and [r["id"] for r in questions] != [r["id"] for r in labels]:
        raise RuntimeError("importer bug: questions and labels list different ids")


def write_outputs(conv: Conversion, outdir: Path) -> tuple[tuple[str, int | None], ...]:
    """Write the conversion into OUTDIR atomically per file; return (name, count) written.

    Files go to a temporary directory first. A new OUTDIR is renamed into place whole;
    in an existing one each file is replaced, and outputs of an earlier import that
    this one does not produce (say labels.jsonl after importing a file without labels)
    are removed so they cannot be mistaken for this import's.
    """
    written: list[tuple[str, int | None]] = [(n, len(r)) for n, r in conv.files.items()]
    if conv.phase is not None:
        written.append((PHASE, None))
    written.append((REPORT, len(conv.entries)))
    fresh = not outdir.exists()
    try:
        parent = outdir.parent if fresh else outdir
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f".{outdir.name}.import-{uuid.uuid4().hex}"
        tmp.mkdir()  # not mkdtemp: its 0700 mode would stick to a new OUTDIR
    except OSError as exc:
        raise OutputError(f"cannot write to {outdir}: {exc.strerror or exc}") from exc
    try:
        _write_all(conv, tmp)
        if fresh:
            os.rename(tmp, outdir)
            return tuple(written)
        for name, _ in written:
            os.replace(tmp / name, outdir / name)
        for stale in set(OUTPUT_NAMES) - {name for name, _ in written}:
            (outdir / stale).unlink(missing_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write to {outdir}: {exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tuple(written)


def _write_all(conv: Conversion, directory: Path) -> None:
    for name, records in conv.files.items():
        _write_jsonl(directory / name, records)
    if conv.phase is not None:
        text = json.dumps(conv.phase, indent=2, ensure_ascii=False) + "\n"
        (directory / PHASE).write_text(text, encoding="utf-8")
    _write_jsonl(directory / REPORT, [e.to_json() for e in conv.entries])


def _write_jsonl(path: Path, records: list[Record]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
