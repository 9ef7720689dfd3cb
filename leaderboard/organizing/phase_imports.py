"""Phases from a benchmark's own released file: run a scoring importer, then create the phase.

The importer (``scoring.importers.run_import``) writes ``labels.jsonl``,
``questions.jsonl`` and ``phase.json`` into a temporary OUTDIR; its report goes back
to the organizer (it may name labels, so it goes only to an actor who manages the
competition, preview or not), with the fields the public questions file will carry and
those of the label file it withholds, so the organizer sees them before opening the phase.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leaderboard.accounts import Actor, managed_competition
from leaderboard.models import Phase
from leaderboard.organizing.phases import create_phase
from leaderboard.phase_data import (
    ImportSources,
    SplitReport,
    assign_private_split,
    check_labels,
    checked_questions,
    derive_questions,
    import_uploads,
    questions_report,
)
from leaderboard.platform import InvalidInput, ServiceContext
from scoring.importers import ImporterError, run_import
from scoring.public_fields import FieldReport


@dataclass(frozen=True)
class ImportedFiles:
    """The phase files an importer wrote: hidden labels, public questions (if any), config."""

    labels: bytes
    questions: bytes | None
    config: dict[str, Any] | None


@dataclass(frozen=True)
class ImportResult:
    """What an import did: the importer's report, the phase (None for a preview), the public file's fields."""

    report: Any  # scoring.importers.ImportReport
    phase: Phase | None
    source_name: str = "source"
    fields: FieldReport | None = None  # what questions.jsonl carries and what of the label file it withholds
    split: SplitReport | None = None  # the private split made at import, if one was asked for
    kept: str | None = None  # a preview's token: the uploaded files wait under it for the real import


def import_phase(
    ctx: ServiceContext,
    *,
    competition_slug: str,
    fmt: str,
    source: bytes | None = None,
    filename: str = "source",
    name: str,
    preview: bool = False,
    actor: Actor,
    originals: bytes | None = None,
    modified: bytes | None = None,
    private_percent: int | None = None,
    kept: str | None = None,
    **phase_fields: Any,
) -> ImportResult:
    """Import a released file with the ``fmt`` importer and create the phase (unless preview).

    Forbidden, before the importer runs, unless actor manages the competition. A preview
    keeps the uploaded files under a token (``ImportResult.kept``); an import given that
    token instead of the files uses them, so the organizer uploads them once. With
    ``private_percent`` a stratified private split is made (phase_data/private_split.py).
    """
    competition = managed_competition(ctx, slug=competition_slug, actor=actor)
    given = ImportSources(source, filename, originals, modified) if source is not None else None
    sources = given or import_uploads.kept_sources(ctx, competition_id=competition.id, token=kept)
    source_name = _safe_name(sources.filename)
    with tempfile.TemporaryDirectory(prefix="tailboard-import-") as tmp:
        path, outdir, options = _write_sources(Path(tmp), sources, source_name)
        report, files = run_importer(fmt, path, outdir, **options)
    split = None
    if private_percent:
        labels, split = assign_private_split(files.labels, percent=private_percent)
        files = ImportedFiles(labels=labels, questions=files.questions, config=files.config)
    fields = public_questions_report(files)
    if preview:
        token = import_uploads.keep_sources(ctx, competition_id=competition.id, sources=sources)
        return ImportResult(report=report, phase=None, source_name=source_name, fields=fields, split=split,
                            kept=token)
    phase = create_phase(ctx, competition_slug=competition_slug, name=name, labels=files.labels,
                         questions=files.questions, config=files.config, actor=actor, **phase_fields)
    return ImportResult(report=report, phase=phase, source_name=source_name, fields=fields, split=split)


def _write_sources(tmp: Path, sources: ImportSources, source_name: str) -> tuple[Path, Path, dict[str, Path]]:
    """Write an import's files under tmp; return (source path, outdir, the importer's file options)."""
    path = tmp / "in" / source_name
    path.parent.mkdir()
    path.write_bytes(sources.source)
    options = {}
    for option in ("originals", "modified"):
        data = getattr(sources, option)
        if data:
            (tmp / "in" / f"{option}.csv").write_bytes(data)
            options[option] = tmp / "in" / f"{option}.csv"
    return path, tmp / "out", options


def public_questions_report(files: ImportedFiles) -> FieldReport:
    """Return the fields the phase's questions.jsonl would carry and those of the label file it withholds."""
    questions = files.questions
    if questions is None:
        questions = derive_questions(files.labels, check_labels(files.labels, files.config).config)
    return questions_report(files.labels, checked_questions(questions))


def run_importer(fmt: str, source: Path, outdir: Path, **options: Any) -> tuple[Any, ImportedFiles]:
    """Run a scoring importer into outdir; return its report and the files it wrote (InvalidInput on failure)."""
    try:
        report = run_import(fmt, source, outdir, **options)
    except ImporterError as error:
        raise InvalidInput(f"The {fmt} importer could not read {source.name}: {error}") from None
    return report, read_import_dir(outdir)


def read_import_dir(outdir: Path) -> ImportedFiles:
    """Return the phase files of an importer's OUTDIR; InvalidInput when it wrote no labels."""
    labels = outdir / "labels.jsonl"
    if not labels.is_file():
        raise InvalidInput(f"{outdir.name} has no labels.jsonl: the imported file carries no labels "
                           "(e.g. a test file without labels, or training data), so it cannot be a phase.")
    questions, config = outdir / "questions.jsonl", outdir / "phase.json"
    try:
        parsed = json.loads(config.read_text(encoding="utf-8-sig")) if config.is_file() else None
    except ValueError as error:
        raise InvalidInput(f"{config.name} is not JSON: {error}") from None
    return ImportedFiles(labels=labels.read_bytes(), questions=questions.read_bytes() if questions.is_file() else None,
                         config=parsed)


def _safe_name(filename: str) -> str:
    """Return a harmless base name for an uploaded source file (importers may read its suffix)."""
    name = re.sub(r"[^\w.\-]", "_", re.split(r"[\\/]", filename or "")[-1]).strip("._")
    return name[:120] or "source"
