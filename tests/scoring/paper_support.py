"""Helpers for the paper-number tests: find the released files, import a phase, score a CSV.

A phase is built the way an organizer builds one (``run_import``, the function behind
``python -m scoring import``) and a prediction file goes through the platform's own
reader (``scoring.read_predictions``) before ``scoring.evaluate`` scores it, so these
tests check the whole path a participant's file takes, not a metric function alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scoring import LabelSet, evaluate, load_labels, read_predictions
from scoring.importers import ImportReport, run_import

DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"
"""``../shared/datasets`` beside the checkout (read-only released files)."""


def released(*parts: str) -> Path:
    """Return a released file under ../shared/datasets, or skip the test saying why."""
    path = DATASETS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/datasets is not beside the checkout: {path} does not exist "
                    "(the paper-number checks need the released benchmark files)")
    return path


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines file the importer wrote."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


@dataclass(frozen=True)
class Phase:
    """One imported phase: its directory, the importer's report and the loaded label set."""

    outdir: Path
    report: ImportReport
    labels: LabelSet

    def questions(self) -> list[dict[str, Any]]:
        """Return the public questions file as records."""
        return jsonl(self.outdir / "questions.jsonl")


def import_phase(fmt: str, source: Path, outdir: Path, **options: Any) -> Phase:
    """Import ``source`` into ``outdir`` and load its labels with its phase.json."""
    report = run_import(fmt, source, outdir, **options)
    labels = load_labels(outdir / "labels.jsonl", outdir / "phase.json")
    return Phase(outdir=outdir, report=report, labels=labels)


def csv_bytes(predictions: Iterable[tuple[str, str]]) -> bytes:
    """Write ``(id, prediction)`` rows as the CSV a participant would upload."""
    lines = ["id,prediction"]
    for item_id, prediction in predictions:
        if "," in item_id or '"' in item_id:
            raise ValueError(f"id {item_id!r} would need CSV quoting")
        lines.append(f"{item_id},{prediction}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def score_csv(labels: LabelSet, predictions: Mapping[str, str] | Iterable[tuple[str, str]]
              ) -> dict[str, Any]:
    """Read the predictions as an uploaded CSV and return the platform's result object."""
    rows = predictions.items() if isinstance(predictions, Mapping) else predictions
    return evaluate(labels, read_predictions(csv_bytes(rows), labels))


def ranked_value(result: dict[str, Any], path: str) -> Any:
    """Return the number a metric path names in a result object (docs/METRICS.md, Metric paths), read the plain way."""
    parts = path.split(".")
    if len(parts) == 1:
        return result["overall"][path]
    if parts[0] == "breakdowns":
        return result["breakdowns"][parts[1]][".".join(parts[2:-1])][parts[-1]]
    node: Any = result
    for part in parts:
        node = node[part]
    return node
