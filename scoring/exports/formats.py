"""The result export formats by name (docs/MOVING.md), as ``GET /api/v1/phases/<id>/results?format=`` names them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from scoring.exports.eee import SCHEMA_VERSION, every_eval_ever_records
from scoring.exports.hf import hf_eval_results
from scoring.exports.identity import iso_utc, sorted_object
from scoring.exports.model import ExportEntry, ExportError, ExportPhase, Figure, check_aware

FORMATS = ("every-eval-ever", "hf-eval-results")


class UnknownExportFormat(ExportError):
    """A format name the exports do not know; the message lists the valid ones."""


def export_results(format_name: str, phase: ExportPhase, entries: Iterable[ExportEntry], *,
                   retrieved_at: datetime, include_baselines: bool = False) -> dict[str, Any]:
    """Return a phase's board in one export format: the records and what they are, keys sorted.

    ``{"format", "schema_version" (Every Eval Ever only), "phase_id", "split", "phase_status",
    "ranking_metric", "retrieved_at", "records": [...]}``; an unknown format raises
    UnknownExportFormat naming the valid ones.
    """
    if format_name == "every-eval-ever":
        records = every_eval_ever_records(phase, entries, retrieved_at=retrieved_at,
                                          include_baselines=include_baselines)
        extra = {"schema_version": SCHEMA_VERSION}
    elif format_name == "hf-eval-results":
        check_aware(retrieved_at, what="retrieved_at")
        records = hf_eval_results(phase, entries, include_baselines=include_baselines)
        extra = {}
    else:
        raise UnknownExportFormat(f"unknown export format {format_name!r}; valid formats: {', '.join(FORMATS)}")
    return sorted_object({"format": format_name, **extra, "phase_id": phase.phase_id, "split": phase.split,
                        "phase_status": "closed" if phase.closed else "open",
                        "ranking_metric": phase.ranking_metric, "retrieved_at": iso_utc(retrieved_at),
                        "records": records})


def figure_from_cell(value: float | None, lo: float | None = None, hi: float | None = None,
                     step: float | None = None, *, noisy: bool = True) -> Figure | None:
    """Return a board cell (value, interval ends, coarse step) as a Figure; None when the board shows no value."""
    if value is None:
        return None
    return Figure(value=value, ci=(lo, hi) if lo is not None and hi is not None else None, step=step, noisy=noisy)


def figures_from_cells(cells: Mapping[str, tuple[float | None, float | None, float | None, float | None]]
                       ) -> dict[str, Figure]:
    """Return a row's cells by path (value, lo, hi, step; step None: exact) as Figures, leaving out empty cells."""
    figures = {path: figure_from_cell(*cell) for path, cell in cells.items()}
    return {path: figure for path, figure in figures.items() if figure is not None}
