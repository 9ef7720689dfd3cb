"""Writing an import's files into OUTDIR: each file whole or not at all, stale outputs removed."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from scoring.importers.common import OUTPUT_NAMES, PHASE, REPORT, Conversion, OutputError, Record


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
    """Write every file of a conversion into a directory."""
    for name, records in conv.files.items():
        _write_jsonl(directory / name, records)
    if conv.phase is not None:
        text = json.dumps(conv.phase, indent=2, ensure_ascii=False) + "\n"
        (directory / PHASE).write_text(text, encoding="utf-8")
    _write_jsonl(directory / REPORT, [e.to_json() for e in conv.entries])


def _write_jsonl(path: Path, records: list[Record]) -> None:
    """Write records as JSON Lines (UTF-8, LF)."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
