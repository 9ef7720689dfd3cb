"""API handlers for a phase: details with the caller's quota, leaderboard, organizer actions."""

from __future__ import annotations

from flask import Response, jsonify, request, url_for

from leaderboard.accounts import access
from leaderboard.board import Leaderboard, board_csv, ranking
from leaderboard.entries import quota
from leaderboard.organizing import phase_settings
from leaderboard.organizing import phases as phase_service
from leaderboard.web import context
from leaderboard.web.api import schemas, serialize
from leaderboard.web.api.auth import current_user, require_organizer
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.deferred import dispatch_after_response
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import board_query, parse_json, parse_query, respond
from leaderboard.web.board_cache.middleware import note_shown_version
from leaderboard.web.board_cache.pages import cached_response
from leaderboard.web.board_cache.shared import JSON_MARKS, JSON_UNMARKED, Marker, shared_body
from leaderboard.web.board_cache.viewers import leave_parts


@bp.get("/phases/<id:phase_id>")
@operation("Phase details, limits and the caller's remaining quota", schemas.Phase, auth="optional",
           errors=(404,), tag="phases")
def get_phase(phase_id: int) -> tuple[Response, int]:
    """Show a phase; with a token, include the caller's quota and when it resets."""
    user = current_user()
    item = access.get_phase(context.ctx(), phase_id)
    status = quota.quota_status(context.ctx(), phase=item, user=user) if user is not None else None
    return respond(serialize.phase(item, status))


@bp.get("/phases/<id:phase_id>/leaderboard")
@operation("One view of a phase's ranking as JSON: a page, or every row", schemas.Leaderboard,
           auth="optional", query=schemas.LeaderboardQuery, errors=(400, 403, 404), tag="phases")
def get_leaderboard(phase_id: int) -> Response | tuple[Response, int]:
    """Rank a phase's entries on the split the caller may see: one view, paged, sorted, searched, filtered."""
    wanted, viewer = parse_query(schemas.LeaderboardAnyFormat), current_user()
    board = ranking.leaderboard(context.ctx(), phase_id=phase_id, viewer=viewer, query=board_query(wanted))
    note_shown_version(board.version)
    if wanted.format == "csv":  # older clients: the same answer as /leaderboard.csv
        return _csv(phase_id, board, personal=viewer is not None)
    body = shared_body(("json", board.cache_key), lambda mark: _marked_json(board.for_everyone(), mark), quoted=True)
    mine = [row.mine for row in board.rows]
    if viewer is not None:  # what the micro-cache needs to answer this token's next read without the app
        leave_parts(body, board.rows, competition_id=board.phase.competition_id, version=board.version,
                    marks=JSON_MARKS, unmarked=JSON_UNMARKED)
    return cached_response(board.cache_key, lambda: body.fill(mine, JSON_MARKS, JSON_UNMARKED),
                           personal=viewer is not None, mimetype="application/json")


@bp.get("/phases/<id:phase_id>/leaderboard.csv")
@operation("Every row of one view of a phase's ranking as CSV", None, auth="optional", query=schemas.BoardFilters,
           errors=(400, 403, 404), tag="phases",
           media=(("text/csv", "Every row of the view: rank, statistics, entry, value and interval, one column per "
                   "metric path (a coarse one followed by its .error) and metadata key (docs/RANKING.md)."),))
def get_leaderboard_csv(phase_id: int) -> Response | tuple[Response, int]:
    """Write every row of a view as CSV, on the split the caller may see."""
    wanted, viewer = parse_query(schemas.BoardFilters), current_user()
    board = ranking.leaderboard(context.ctx(), phase_id=phase_id, viewer=viewer, query=board_query(wanted))
    return _csv(phase_id, board, personal=viewer is not None)


def _csv(phase_id: int, board: Leaderboard, *, personal: bool) -> Response | tuple[Response, int]:
    """Answer a board as a CSV download; no row is marked in a CSV: the same text for everyone."""
    download = {"Content-Disposition": f'attachment; filename="phase-{phase_id}-leaderboard.csv"'}
    csv_body = shared_body(("csv", board.cache_key), lambda mark: board_csv(board.for_everyone()))
    return cached_response(board.cache_key, lambda: csv_body.fill((), {}), personal=personal,
                           mimetype="text/csv", headers=download)


def _marked_json(board: Leaderboard, mark: Marker) -> str:
    """Return the JSON of a board answer for everyone, each row's ``mine`` a marker filled per request."""
    data = serialize.leaderboard(board).model_dump(mode="json", exclude_unset=True)
    for index, row in enumerate(data["rows"]):
        row["mine"] = str(mark("mine", index))
    return jsonify(data).get_data(as_text=True)  # as parsing.json_body sends a model


@bp.post("/phases/<id:phase_id>/open")
@operation("Open a phase now; reopening a closed phase whose private split was shown needs {\"confirm\": true}",
           schemas.PhaseAction, auth="organizer", body=schemas.PhaseOpen, errors=(400, 404, 409), tag="organizers")
def open_phase(phase_id: int) -> tuple[Response, int]:
    """Open a phase whatever its dates say (an empty body is {"confirm": false})."""
    body = parse_json(schemas.PhaseOpen) if request.get_data() else schemas.PhaseOpen()
    item = phase_service.open_phase(context.ctx(), phase_id=phase_id, actor=require_organizer(), confirm=body.confirm)
    return respond(schemas.PhaseAction(id=item.id, status=serialize.status(item)))


@bp.post("/phases/<id:phase_id>/close")
@operation("Close a phase now (reveals the private leaderboard)", schemas.PhaseAction, auth="organizer",
           errors=(404,), tag="organizers")
def close_phase(phase_id: int) -> tuple[Response, int]:
    """Close a phase to submissions."""
    item = phase_service.close_phase(context.ctx(), phase_id=phase_id, actor=require_organizer())
    return respond(schemas.PhaseAction(id=item.id, status=serialize.status(item)))


@bp.post("/phases/<id:phase_id>/rescore")
@operation("Re-score every scored submission of a phase in a background job", schemas.RescoreQueued, status=202,
           auth="organizer", errors=(404, 503), tag="organizers")
def rescore_phase(phase_id: int) -> tuple[Response, int]:
    """Start the re-scoring job; old scores stay on the board until each is replaced."""
    job = phase_service.rescore_phase(dispatch_after_response(), phase_id=phase_id, actor=require_organizer())
    url = url_for("api.get_job", job_id=job.id, _external=True)
    return respond(schemas.RescoreQueued(id=phase_id, queued=job.total or 0, job_id=job.id, url=url), 202)


@bp.post("/phases/<id:phase_id>/settings")
@operation("Change a phase's probing defences (docs/PROBING.md); no rescoring needed", schemas.Phase, auth="organizer",
           body=schemas.ProbingUpdate, errors=(400, 404), tag="organizers")
def update_settings(phase_id: int) -> tuple[Response, int]:
    """Change min_slice_items, public_feedback, ladder_step or min_answered; a null restores the default."""
    body = parse_json(schemas.ProbingUpdate)
    item = phase_settings.update_settings(context.ctx(), phase_id=phase_id, actor=require_organizer(),
                                          **body.model_dump(exclude_unset=True))
    return respond(serialize.phase(item, None))


@bp.post("/phases/<id:phase_id>/views")
@operation("Change a phase's leaderboard views (docs/FORMATS.md); no rescoring needed", schemas.Phase, auth="organizer",
           body=schemas.ViewsUpdate, errors=(400, 404), tag="organizers")
def update_views(phase_id: int) -> tuple[Response, int]:
    """Set the views: a list of {name, metric, columns} whose paths the label file produces; null: the default."""
    body = parse_json(schemas.ViewsUpdate)
    item = phase_settings.update_settings(context.ctx(), phase_id=phase_id, actor=require_organizer(), views=body.views)
    return respond(serialize.phase(item, None))
