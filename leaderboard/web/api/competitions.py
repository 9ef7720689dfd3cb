"""API handlers for competitions and phase creation."""

from __future__ import annotations

import json
from typing import Any

from flask import Response, url_for

from leaderboard.board import AcrossQuery
from leaderboard.board.across_phases import across_phases
from leaderboard.disclosure import with_probing
from leaderboard.entries import with_entry_settings
from leaderboard.organizing import competitions as competition_service
from leaderboard.organizing import phases as phase_service
from leaderboard.phase_data import phase_questions_report
from leaderboard.platform import InvalidInput
from leaderboard.platform.db import naive_utc
from leaderboard.web import context
from leaderboard.web.api import schemas, serialize
from leaderboard.web.api.auth import current_user, require_organizer
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_form, parse_json, parse_query, respond


@bp.get("/competitions")
@operation("List competitions with their phases and status", schemas.CompetitionList, auth="optional",
           tag="competitions")
def list_competitions() -> tuple[Response, int]:
    """List every competition, those with an open phase first."""
    current_user()  # a bad token is refused even where none is needed
    items = competition_service.list_competitions(context.ctx())
    return respond(schemas.CompetitionList(competitions=[serialize.competition(c) for c in items]))


@bp.get("/competitions/<slug>/leaderboard")
@operation("A competition's entries across its phases (docs/METRICS.md), one page", schemas.CompetitionLeaderboard,
           auth="optional", query=schemas.CompetitionLeaderboardQuery, errors=(400, 404), tag="competitions")
def get_competition_leaderboard(slug: str) -> tuple[Response, int]:
    """Rank entries across the phases whose boards the caller may read: one column per phase, mean, phases."""
    wanted = parse_query(schemas.CompetitionLeaderboardQuery)
    query = AcrossQuery(page=wanted.page, per_page=wanted.per_page, sort=wanted.sort, order=wanted.order, q=wanted.q)
    return respond(serialize.across(across_phases(context.ctx(), slug=slug, viewer=current_user(), query=query)))


@bp.post("/competitions")
@operation("Create a competition", schemas.CompetitionCreated, status=201, auth="organizer",
           body=schemas.CompetitionCreate, errors=(400, 409), tag="organizers")
def create_competition() -> tuple[Response, int]:
    """Create a competition from a JSON body."""
    organizer = require_organizer()
    body = parse_json(schemas.CompetitionCreate)
    item = competition_service.create_competition(
        context.ctx(), slug=body.slug, title=body.title, description=body.description, actor=organizer,
        requires_approval=body.requires_approval,
    )
    created = schemas.CompetitionCreated(slug=item.slug, title=item.title, url=serialize.competition(item).url)
    return respond(created, 201)


@bp.post("/competitions/<slug>/phases")
@operation("Create the next phase of a competition", schemas.PhaseCreated, status=201, auth="organizer",
           form=schemas.PhaseCreate, errors=(400, 404, 409, 413), tag="organizers")
def create_phase(slug: str) -> tuple[Response, int]:
    """Create a phase from its label file, optional questions file, config, dates and limits."""
    organizer = require_organizer()
    fields, files = parse_form(schemas.PhaseCreate, text_files=("config",))
    questions = files.get("questions")
    item = phase_service.create_phase(
        context.ctx(),
        competition_slug=slug,
        name=fields.name,
        labels=files["labels"].read(),
        questions=questions.read() if questions is not None else None,
        config=with_entry_settings(with_probing(_config(fields.config), fields.probing()), fields.entry_settings()),
        start_at=naive_utc(fields.start),
        end_at=naive_utc(fields.end),
        max_per_day=fields.max_per_day,
        max_total=fields.max_total,
        description=fields.description,
        leaderboard_visibility=fields.leaderboard_visibility,
        actor=organizer,
    )
    url = url_for("api.get_phase", phase_id=item.id, _external=True)
    report = phase_questions_report(context.ctx(), item)
    return respond(schemas.PhaseCreated(id=item.id, name=item.name, status=serialize.status(item), url=url,
                                        public_fields=list(report.kept), withheld_fields=list(report.withheld)), 201)


def _config(text: str | None) -> dict[str, Any] | None:
    if text is None or not text.strip():
        return None
    try:
        config = json.loads(text)
    except ValueError as error:
        raise InvalidInput(f"The phase config is not valid JSON: {error}.") from None
    if not isinstance(config, dict):
        raise InvalidInput("The phase config must be a JSON object (docs/FORMATS.md#phase-config).")
    return config
