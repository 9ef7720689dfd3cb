"""API handler for organizers' baselines (SPEC §9): a named prediction file with metadata, flagged on the board."""

from __future__ import annotations

from typing import BinaryIO, cast

from flask import Response, url_for

from leaderboard.services.baselines import add_baseline
from leaderboard.services.entries import metadata_from_json
from leaderboard.views.api import entry_schemas
from leaderboard.views.api.auth import require_organizer
from leaderboard.views.api.blueprint import bp
from leaderboard.views.api.deferred import dispatch_after_response
from leaderboard.views.api.parsing import parse_form, respond
from leaderboard.views.api.spec import operation


@bp.post("/phases/<id:phase_id>/baselines")
@operation("Add a named baseline (e.g. 'Human', 'GPT-4o') with metadata; it is scored and flagged on the board",
           entry_schemas.BaselineCreated, status=201, auth="organizer", form=entry_schemas.BaselineUpload,
           errors=(400, 404, 409, 413), tag="organizers")
def create_baseline(phase_id: int) -> tuple[Response, int]:
    """Validate, store and queue an organizer's baseline file (managers of the competition only)."""
    organizer = require_organizer()
    fields, files = parse_form(entry_schemas.BaselineUpload)
    upload = files["file"]
    row = add_baseline(dispatch_after_response(), phase_id=phase_id, name=fields.name,
                       filename=upload.filename or "baseline", stream=cast(BinaryIO, upload.stream), actor=organizer,
                       metadata=metadata_from_json(fields.metadata))
    url = url_for("api.get_submission", submission_id=row.submission_id, _external=True)
    return respond(entry_schemas.BaselineCreated(id=row.id, name=row.name, submission_id=row.submission_id,
                                                 metadata=row.submission.entry_metadata, url=url), 201)
