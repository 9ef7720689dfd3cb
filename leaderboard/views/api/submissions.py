"""API handlers for uploading a prediction file and reading a submission."""

from __future__ import annotations

from typing import BinaryIO, cast

from flask import Response, request

from leaderboard import web
from leaderboard.services import submissions as submission_service
from leaderboard.services.errors import NotFound, Unauthorized
from leaderboard.views.api import bp, schemas, serialize
from leaderboard.views.api.auth import current_user, require_user
from leaderboard.views.api.deferred import dispatch_after_response
from leaderboard.views.api.limits import invalid_uploads
from leaderboard.views.api.parsing import parse_form, respond
from leaderboard.views.api.spec import operation

IDEMPOTENCY_HELP = "Any unique string (e.g. a UUID); a retry with the same key returns the first submission."


@bp.post("/phases/<id:phase_id>/submissions")
@operation("Upload a prediction file; answered before scoring finishes", schemas.SubmissionAccepted, status=202,
           auth="participant", form=schemas.SubmissionUpload, headers=(("Idempotency-Key", IDEMPOTENCY_HELP),),
           errors=(400, 404, 409, 413), tag="submissions")
@invalid_uploads
def create_submission(phase_id: int) -> tuple[Response, int]:
    """Store, validate and charge an upload, then queue it for scoring."""
    user = require_user()
    fields, files = parse_form(schemas.SubmissionUpload)
    upload = files["file"]
    item = submission_service.accept_submission(
        dispatch_after_response(),
        phase_id=phase_id,
        user=user,
        filename=upload.filename or "predictions",
        stream=cast(BinaryIO, upload.stream),
        description=fields.description,
        idempotency_key=request.headers.get("Idempotency-Key"),
    )
    body = serialize.accepted(item)
    response, status = respond(body, 202)
    response.headers["Location"] = body.url
    return response, status


@bp.get("/submissions/<id:submission_id>")
@operation("A submission's status, visible scores and validation errors", schemas.Submission,
           auth="optional", errors=(404,), tag="submissions")
def get_submission(submission_id: int) -> tuple[Response, int]:
    """Show a submission to its owner or its competition's organizers (baselines to anyone)."""
    viewer = current_user()
    try:
        item = submission_service.get_submission(web.ctx(), submission_id=submission_id, viewer=viewer)
    except NotFound:
        if viewer is None:  # the same answer whether or not it exists: log in first
            raise Unauthorized("This call needs an API token: 'Authorization: Bearer <token>'.") from None
        raise
    shown = submission_service.visible_scores(web.ctx(), submission=item, viewer=viewer)
    scope = submission_service.scores_scope(web.ctx(), submission=item, viewer=viewer)
    return respond(serialize.submission(item, shown=shown, scope=scope))

