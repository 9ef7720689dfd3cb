"""API handlers for a phase: details with the caller's quota, leaderboard, organizer actions."""

from __future__ import annotations

from flask import Response

from leaderboard import web
from leaderboard.services import phases as phase_service
from leaderboard.services import quota, ranking
from leaderboard.views.api import bp, schemas, serialize
from leaderboard.views.api.auth import current_user, require_organizer
from leaderboard.views.api.deferred import dispatch_after_response
from leaderboard.views.api.parsing import parse_query, respond
from leaderboard.views.api.spec import operation


@bp.get("/phases/<id:phase_id>")
@operation("Phase details, limits and the caller's remaining quota", schemas.Phase, auth="optional",
           errors=(404,), tag="phases")
def get_phase(phase_id: int) -> tuple[Response, int]:
    """Show a phase; with a token, include the caller's quota and when it resets."""
    user = current_user()
    item = phase_service.get_phase(web.ctx(), phase_id)
    status = quota.quota_status(web.ctx(), phase=item, user=user) if user is not None else None
    return respond(serialize.phase(item, status))


@bp.get("/phases/<id:phase_id>/leaderboard")
@operation("Ranked rows of a phase (JSON, or CSV with ?format=csv)", schemas.Leaderboard, auth="optional",
           query=schemas.LeaderboardQuery, errors=(400, 403, 404), tag="phases",
           media=(("text/csv", "The same rows as CSV."),))
def get_leaderboard(phase_id: int) -> Response | tuple[Response, int]:
    """Rank a phase's entries on the split the caller may see."""
    viewer = current_user()
    wanted = parse_query(schemas.LeaderboardQuery)
    board = ranking.leaderboard(web.ctx(), phase_id=phase_id, viewer=viewer)
    if wanted.format == "csv":
        return Response(
            ranking.leaderboard_csv(board),
            mimetype="text/csv",
            headers={"Content-Disposition": f'attachment; filename="phase-{phase_id}-leaderboard.csv"'},
        )
    return respond(serialize.leaderboard(board))


@bp.post("/phases/<id:phase_id>/open")
@operation("Open a phase for submissions now", schemas.PhaseAction, auth="organizer", errors=(404,), tag="organizers")
def open_phase(phase_id: int) -> tuple[Response, int]:
    """Open a phase whatever its dates say."""
    item = phase_service.open_phase(web.ctx(), phase_id=phase_id, actor=require_organizer())
    return respond(schemas.PhaseAction(id=item.id, status=serialize.status(item)))


@bp.post("/phases/<id:phase_id>/close")
@operation("Close a phase now (reveals the private leaderboard)", schemas.PhaseAction, auth="organizer",
           errors=(404,), tag="organizers")
def close_phase(phase_id: int) -> tuple[Response, int]:
    """Close a phase to submissions."""
    item = phase_service.close_phase(web.ctx(), phase_id=phase_id, actor=require_organizer())
    return respond(schemas.PhaseAction(id=item.id, status=serialize.status(item)))


@bp.post("/phases/<id:phase_id>/rescore")
@operation("Rescore every scored submission of a phase", schemas.RescoreQueued, status=202, auth="organizer",
           errors=(404,), tag="organizers")
def rescore_phase(phase_id: int) -> tuple[Response, int]:
    """Retire the phase's scores and queue its submissions again."""
    queued = phase_service.rescore_phase(dispatch_after_response(), phase_id=phase_id, actor=require_organizer())
    return respond(schemas.RescoreQueued(id=phase_id, queued=queued), 202)
