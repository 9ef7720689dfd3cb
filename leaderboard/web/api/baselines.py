"""API handler for organizers' baselines (docs/ENTRIES.md): a named prediction file with metadata, flagged."""

from __future__ import annotations

from typing import BinaryIO, cast

from flask import Response, url_for

from leaderboard.entries import metadata_from_json
from leaderboard.organizing import add_baseline
from leaderboard.web.api.auth import require_organizer
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.deferred import dispatch_after_response
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_form, respond
from leaderboard.web.api.schemas import entries


@bp.post("/phases/<id:phase_id>/baselines")
@operation("Add a named baseline (e.g. 'Human', 'GPT-4o') with metadata; it is scored and flagged on the board",
           entries.BaselineCreated, status=201, auth="organizer", form=entries.BaselineUpload,
           errors=(400, 404, 409, 413), tag="organizers")
def create_baseline(phase_id: int) -> tuple[Response, int]:
    """Validate, store and queue an organizer's baseline file (managers of the competition only)."""
    organizer = require_organizer()
    fields, files = parse_form(entries.BaselineUpload)
    upload = files["file"]
    row = add_baseline(dispatch_after_response(), phase_id=phase_id, name=fields.name,
                       filename=upload.filename or "baseline", stream=cast(BinaryIO, upload.stream), actor=organizer,
                       metadata=metadata_from_json(fields.metadata))
    url = url_for("api.get_submission", submission_id=row.submission_id, _external=True)
    return respond(entries.BaselineCreated(id=row.id, name=row.name, submission_id=row.submission_id,
                                                 metadata=row.submission.entry_metadata, url=url), 201)
