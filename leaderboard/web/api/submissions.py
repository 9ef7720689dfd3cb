"""API handlers for uploading a prediction file and reading a submission."""

from __future__ import annotations

from typing import BinaryIO, cast

from flask import Response, request

from leaderboard.accounts import access
from leaderboard.entries import final_selections, metadata_from_json, selections
from leaderboard.models import Submission
from leaderboard.platform import NotFound, Unauthorized
from leaderboard.submissions import intake as submission_service
from leaderboard.submissions import place_in_line
from leaderboard.submissions.coverage import file_coverage
from leaderboard.web import context
from leaderboard.web.api import schemas, serialize
from leaderboard.web.api.auth import current_user, require_user
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.deferred import dispatch_after_response
from leaderboard.web.api.limits import invalid_uploads
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_form, respond
from leaderboard.web.api.schemas import entries

IDEMPOTENCY_HELP = "Any unique string (e.g. a UUID); a retry with the same key returns the first submission."


@bp.post("/phases/<id:phase_id>/submissions")
@operation("Upload a prediction file; answered before scoring finishes", schemas.SubmissionAccepted, status=202,
           auth="participant", form=schemas.SubmissionUpload, headers=(("Idempotency-Key", IDEMPOTENCY_HELP),),
           errors=(400, 403, 404, 409, 413, 503), tag="submissions")
@invalid_uploads
def create_submission(phase_id: int) -> tuple[Response, int]:
    """Store, validate and charge an upload, then queue it for scoring."""
    user = require_user()
    fields, files = parse_form(schemas.SubmissionUpload)
    upload = files["file"]
    data = submission_service.read_upload(cast(BinaryIO, upload.stream), limit=context.ctx().settings.max_upload_bytes)
    item = submission_service.accept_submission(
        dispatch_after_response(),
        phase_id=phase_id,
        user=user,
        filename=upload.filename or "predictions",
        stream=data,
        description=fields.description,
        idempotency_key=request.headers.get("Idempotency-Key"),
        method=fields.method,
        metadata=metadata_from_json(fields.metadata),
    )
    coverage = file_coverage(context.ctx(), phase_id=phase_id, data=data) if item.status != "failed" else None
    body = serialize.accepted(item, warnings=[w for w in [coverage and coverage.warning()] if w])
    response, status = respond(body, 202)
    response.headers["Location"] = body.url
    return response, status


@bp.get("/submissions/<id:submission_id>")
@operation("A submission's status, visible scores and validation errors", schemas.Submission,
           auth="optional", errors=(401, 404), tag="submissions",
           access="Needs a token, except for a baseline's submission, which anyone may read. Its owner (and their "
                  "team) and the competition's organizers read it; without a token any other id answers 401, and "
                  "someone else's answers 404.")
def get_submission(submission_id: int) -> tuple[Response, int]:
    """Show a submission to its owner or its competition's organizers (baselines to anyone)."""
    viewer = current_user()
    try:
        item = access.get_submission(context.ctx(), submission_id=submission_id, viewer=viewer)
    except NotFound:
        if viewer is None:  # the same answer whether or not it exists: log in first
            raise Unauthorized("This call needs an API token: 'Authorization: Bearer <token>'.") from None
        raise
    shown = submission_service.visible_scores(context.ctx(), submission=item, viewer=viewer)
    scope = submission_service.scores_scope(context.ctx(), submission=item, viewer=viewer)
    attempts = submission_service.scoring_attempts(item, viewer)
    place = place_in_line(context.ctx(), submission=item)
    return respond(serialize.submission(item, shown=shown, scope=scope, attempts=attempts, place=place))



@bp.post("/submissions/<id:submission_id>/select")
@operation("Select a submission for the final (private) ranking", entries.Selection, auth="participant",
           errors=(403, 404, 409), tag="submissions")
def select_submission(submission_id: int) -> tuple[Response, int]:
    """Select one of the caller's (or their team's) submissions; at most final_selections, while the phase is open."""
    item = selections.select_submission(context.ctx(), submission_id=submission_id, user=require_user())
    return respond(_selection(item))


@bp.post("/submissions/<id:submission_id>/unselect")
@operation("Take a submission out of the final selection", entries.Selection, auth="participant",
           errors=(403, 404, 409), tag="submissions")
def unselect_submission(submission_id: int) -> tuple[Response, int]:
    """Unselect one of the caller's (or their team's) submissions while the phase is open."""
    item = selections.unselect_submission(context.ctx(), submission_id=submission_id, user=require_user())
    return respond(_selection(item))


def _selection(item: Submission) -> entries.Selection:
    """Return a submission's selection state with its owner's selected submissions."""
    return entries.Selection(id=item.id, selected=item.selected,
                                   selected_ids=selections.selected_ids(context.ctx(), submission=item),
                                   final_selections=final_selections(item.phase))
