"""Importers: turn a benchmark's own released file into Tailboard's phase files.

``python -m scoring import FORMAT SOURCE OUTDIR`` writes ``questions.jsonl`` (public),
``labels.jsonl`` (hidden), ``phase.json`` (docs/FORMATS.md) and ``report.jsonl``
(one entry per source record: kept, changed or skipped, with the reason; it may name
labels, so it stays with the hidden files). Nothing is written unless the whole
source parses.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from scoring.importers import colota, comparisonqa, creak, tgcsr
from scoring.importers.common import (
    Conversion,
    ImporterError,
    ImportReport,
    ImportUsageError,
    OutputError,
    ReportEntry,
    SourceFormatError,
    check_conversion,
)
from scoring.importers.outputs import write_outputs

__all__ = [
    "FORMATS", "ImportReport", "ImportUsageError", "ImporterError", "OutputError",
    "ReportEntry", "SourceFormatError", "configure_parser", "import_cmd", "print_report",
    "run_import",
]

FORMATS: dict[str, Callable[..., Conversion]] = {
    "creak": creak.convert,
    "colota": colota.convert,
    "tgcsr": tgcsr.convert,
    "comparisonqa": comparisonqa.convert,
}
OPTIONS: dict[str, frozenset[str]] = {"colota": frozenset({"originals", "modified"}), "creak": frozenset({"metadata"})}


def run_import(fmt: str, source: Path, outdir: Path, **options: Any) -> ImportReport:
    """Import SOURCE in format ``fmt`` into OUTDIR and return the report.

    Options (None means not given): ``originals`` and ``modified`` (colota only),
    ``metadata`` (creak only).
    Raises SourceFormatError or OutputError (exit 3), ImportUsageError (exit 2).
    """
    if fmt not in FORMATS:
        raise ImportUsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    given = {name: value for name, value in options.items() if value is not None}
    foreign = sorted(set(given) - OPTIONS.get(fmt, frozenset()))
    if foreign:
        flags = ", ".join("--" + name for name in foreign)
        raise ImportUsageError(f"{flags} cannot be used with format {fmt}")
    source, outdir = Path(source), Path(outdir)
    conversion = FORMATS[fmt](source, **given)
    check_conversion(conversion)
    written = write_outputs(conversion, outdir)
    return ImportReport(fmt=fmt, source=source, outdir=outdir,
                        entries=tuple(conversion.entries), notes=tuple(conversion.notes),
                        written=written)


def configure_parser(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``python -m scoring import`` to ``p``."""
    p.add_argument("format", metavar="FORMAT", choices=sorted(FORMATS),
                   help="source format: " + ", ".join(FORMATS))
    p.add_argument("source", metavar="SOURCE", type=Path,
                   help="the benchmark's released file, e.g. creak/dev.json")
    p.add_argument("outdir", metavar="OUTDIR", type=Path,
                   help="directory for questions.jsonl, labels.jsonl, phase.json, report.jsonl")
    p.add_argument("--originals", metavar="CSV", type=Path,
                   help="colota: baselines/data/QA-original.csv or CV-original.csv; adds the "
                        "popular originals as head items with ids orig-<ID>")
    p.add_argument("--modified", metavar="CSV", type=Path,
                   help="colota, with --originals: baselines/data/*-modified.csv; links each "
                        "record to its original (field 'original') where the CSV confirms it")
    p.add_argument("--metadata", metavar="JSON", type=Path,
                   help="creak: a JSON object mapping each id to its category, popularity (head, torso, tail "
                        "or a number) and split (public or private), which the release does not have")
    p.add_argument("--verbose", action="store_true",
                   help="print every entry (default: only entries with a reason, then the notes and the summary)")
    p.add_argument("--quiet", action="store_true",
                   help="the default: only entries with a reason, the notes and the summary")


def import_cmd(args: argparse.Namespace) -> int:
    """Run the import named by parsed arguments, print its report, return the exit code."""
    options = {name: getattr(args, name, None) for name in ("originals", "modified", "metadata")}
    try:
        report = run_import(args.format, args.source, args.outdir, **options)
    except ImporterError as exc:
        print(f"import: {exc}", file=sys.stderr)
        return exc.exit_code
    print_report(report, sys.stdout, verbose=getattr(args, "verbose", False))
    return 0


def print_report(report: ImportReport, out: TextIO, *, verbose: bool = False) -> None:
    """Print the entries with a reason (every entry if verbose), the notes, then the summary."""
    for item in report.entries:
        if verbose or item.reason is not None:
            print(item.describe(), file=out)
    for note in report.notes:
        print(f"note: {note}", file=out)
    print(report.summary(), file=out)
