"""A phase's board in formats other tools read (docs/MOVING.md): Every Eval Ever 0.3.0 and Hugging Face eval results.

The platform fills an ``ExportPhase`` and one ``ExportEntry`` per board row (figures
as the board shows them: exact, or coarse with their step) and calls
``export_results(format, phase, entries, retrieved_at=...)``; or, per format,
``every_eval_ever_records`` and ``hf_eval_results``. The output is plain JSON-ready
data, keys sorted, one record per ranked entry in board order (baselines on request),
each figure with its direction, range and 95% interval; coarse figures are marked
(Every Eval Ever) or left out (Hugging Face). ``scales.metric_scale`` says what a
metric path measures, ``identity`` who a record is about (model ids and their fallback).
"""

from __future__ import annotations

from scoring.exports.eee import SCHEMA_VERSION, every_eval_ever_records
from scoring.exports.formats import FORMATS, UnknownExportFormat, export_results, figure_from_cell, figures_from_cells
from scoring.exports.hf import hf_eval_results
from scoring.exports.identity import model_id, to_json
from scoring.exports.model import ExportEntry, ExportError, ExportPhase, Figure
from scoring.exports.scales import MetricScale, metric_scale

__all__ = [
    "FORMATS", "SCHEMA_VERSION", "ExportEntry", "ExportError", "ExportPhase", "Figure", "MetricScale",
    "UnknownExportFormat", "every_eval_ever_records", "export_results", "figure_from_cell", "figures_from_cells",
    "hf_eval_results", "metric_scale", "model_id", "to_json",
]
