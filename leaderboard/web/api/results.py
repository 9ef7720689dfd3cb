"""``GET /api/v1/phases/<id>/results?format=``: a board as Every Eval Ever or Hugging Face results (docs/MOVING.md).

The export is built from the board exactly as a participant reads it (the same rows as
``/leaderboard``, every row of one view, nobody's marked): a figure the board shows
coarse (a slice while the phase is open, a laddered value) goes out with its grid step
and is never exported as exact; a figure the board does not show is not exported.
"""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import metadata as package_metadata
from typing import Any

from flask import Response, url_for

from leaderboard.accounts import access
from leaderboard.board import BoardQuery, Leaderboard, ShownRow, path_label, ranking
from leaderboard.platform import InvalidInput
from leaderboard.platform.db import as_aware_utc
from leaderboard.web import context
from leaderboard.web.api.auth import current_user
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_query
from leaderboard.web.api.schemas import ResultExport, ResultsQuery
from scoring.exports import FORMATS, ExportEntry, ExportPhase, Figure, UnknownExportFormat, export_results, to_json
from scoring.exports.scales import metric_scale
from scoring.metrics.registry import UnknownMetricError

SCORE_TYPES = (str, int, float, bool)


@bp.get("/phases/<id:phase_id>/results")
@operation("A phase's board as Every Eval Ever records or Hugging Face eval results", ResultExport,
           auth="optional", query=ResultsQuery, errors=(400, 403, 404), tag="phases")
def get_results(phase_id: int) -> Response:
    """Export one view of a phase's board as shown to participants, in the format asked for."""
    access.get_phase(context.ctx(), phase_id)  # an unknown phase is a 404 before any query problem
    wanted = parse_query(ResultsQuery)
    if wanted.format not in FORMATS:
        raise InvalidInput(f"Unknown export format {wanted.format!r}; valid formats: {', '.join(FORMATS)}.",
                           {"formats": list(FORMATS)})
    board = ranking.leaderboard(context.ctx(), phase_id=phase_id, viewer=current_user(),
                                query=BoardQuery(view=wanted.view, every_row=True)).for_everyone()
    phase = export_phase(board)
    entries = [entry for row in board.rows if (entry := export_entry(row, phase)) is not None]
    try:
        document = export_results(wanted.format, phase, entries, retrieved_at=datetime.now(UTC),
                                  include_baselines=wanted.baselines)
    except UnknownExportFormat as error:  # the check above already answered; kept for a format list change
        raise InvalidInput(str(error), {"formats": list(FORMATS)}) from None
    name = f"phase-{phase_id}-{wanted.format}.json"
    return Response(to_json(document), mimetype="application/json",
                    headers={"Content-Disposition": f'inline; filename="{name}"', "Cache-Control": "no-cache"})


def export_phase(board: Leaderboard) -> ExportPhase:
    """Return what the exports need to know of the phase and the view shown."""
    phase = board.phase
    task_type = phase.task_config.get("task_type", "binary")
    metric = board.view.metric
    columns = tuple(path for path in board.columns if path != metric and _exportable(path, task_type))
    return ExportPhase(
        competition_slug=phase.competition.slug, competition_title=phase.competition.title,
        competition_url=url_for("public.competition", slug=phase.competition.slug, _external=True),
        phase_id=phase.id, phase_name=phase.name, phase_url=url_for("public.phase", phase_id=phase.id, _external=True),
        task_type=task_type, split=None if board.split == "all" else board.split,  # type: ignore[arg-type]
        closed=board.board == "closed", ranking_metric=metric, columns=columns, view_name=board.view.name,
        labels={path: path_label(path) for path in (metric, *columns)}, hf_dataset=phase.task_config.get("hf_dataset"),
        library_version=_version())


def export_entry(row: ShownRow, phase: ExportPhase) -> ExportEntry | None:
    """Return a board row as an export entry with its figures as shown (None for a row without a name)."""
    if not row.display_name.strip():
        return None
    return ExportEntry(
        rank=row.rank, stat_rank=row.stat_rank, display_name=row.display_name, team=row.team,
        method=row.method or "default",
        metadata={key: value for key, value in row.metadata.items() if isinstance(value, SCORE_TYPES)},
        submitted_at=as_aware_utc(row.submitted_at), submission_id=row.submission_id,
        figures=_figures(row, phase), is_baseline=row.is_baseline, builtin=row.builtin)


def _figures(row: ShownRow, phase: ExportPhase) -> dict[str, Figure]:
    """Return a row's shown figures: the ranked value (on the ladder's grid if laddered), then its column cells."""
    if row.withheld:
        return {}
    figures: dict[str, Figure] = {}
    if row.value is not None:
        ci = row.ci if row.ci is not None else None
        figures[phase.ranking_metric] = Figure(value=row.value, ci=ci, step=row.ladder_step, noisy=False)
    for path in phase.columns:
        value, lo, hi, error = row.columns.get(path, (None, None, None, None))
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        step, noisy = (error, True) if error is not None else (row.ladder_step, False)
        interval = (lo, hi) if lo is not None and hi is not None else None
        figures[path] = Figure(value=float(value), ci=interval, step=step, noisy=noisy)
    return figures


def _exportable(path: str, task_type: Any) -> bool:
    """Return whether a column is a metric path the exports describe (counts and the like are not)."""
    try:
        metric_scale(path, task_type=task_type)
    except UnknownMetricError:
        return False
    return True


def _version() -> str:
    """Return the installed version of Tailboard (the scoring library that computed the figures)."""
    try:
        return package_metadata.version("tailboard")
    except package_metadata.PackageNotFoundError:
        return "unknown"
