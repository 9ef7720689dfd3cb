"""Phases from a benchmark's own released file: run a scoring importer, then create the phase.

The importer (``scoring.importers.run_import``) writes ``labels.jsonl``,
``questions.jsonl`` and ``phase.json`` into a temporary OUTDIR; its report goes back
to the organizer (it may name labels, so it goes only to an actor who manages the
competition, preview or not).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leaderboard.models import Phase
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import InvalidInput
from leaderboard.services.permissions import Actor
from leaderboard.services.phases import create_phase, managed_competition


@dataclass(frozen=True)
class ImportedFiles:
    """The phase files an importer wrote: hidden labels, public questions (if any), config."""

    labels: bytes
    questions: bytes | None
    config: dict[str, Any] | None


@dataclass(frozen=True)
class ImportResult:
    """What an import did: the importer's report, the phase (None for a preview), the stored source name."""

    report: Any  # scoring.importers.ImportReport
    phase: Phase | None
    source_name: str = "source"


def import_phase(
    ctx: ServiceContext,
    *,
    competition_slug: str,
    fmt: str,
    source: bytes,
    filename: str = "source",
    name: str,
    preview: bool = False,
    actor: Actor,
    **phase_fields: Any,
) -> ImportResult:
    """Import a released file with the ``fmt`` importer and create the phase (unless preview).

    Forbidden, before the importer runs, unless actor manages the competition.
    """
    managed_competition(ctx, slug=competition_slug, actor=actor)
    source_name = _safe_name(filename)
    with tempfile.TemporaryDirectory(prefix="tailboard-import-") as tmp:
        path = Path(tmp) / "in" / source_name
        path.parent.mkdir()
        path.write_bytes(source)
        report, files = run_importer(fmt, path, Path(tmp) / "out")
    if preview:
        return ImportResult(report=report, phase=None, source_name=source_name)
    phase = create_phase(ctx, competition_slug=competition_slug, name=name, labels=files.labels,
                         questions=files.questions, config=files.config, actor=actor, **phase_fields)
    return ImportResult(report=report, phase=phase, source_name=source_name)


def run_importer(fmt: str, source: Path, outdir: Path, **options: Any) -> tuple[Any, ImportedFiles]:
    """Run a scoring importer into outdir; return its report and the files it wrote (InvalidInput on failure)."""
    from scoring.importers import ImporterError, run_import

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
