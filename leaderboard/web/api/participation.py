"""API handlers of participation approval (issue 17) and competition settings.

A participant asks to take part in a competition that requires approval; the
competition's organizers list the requests and approve or refuse each (audit-logged).
"""

from __future__ import annotations

from flask import Response

from leaderboard.accounts import get_competition, participation
from leaderboard.models import Competition
from leaderboard.organizing import competitions
from leaderboard.platform.db import as_aware_utc
from leaderboard.web import context
from leaderboard.web.api import serialize
from leaderboard.web.api.auth import require_organizer, require_user
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_json, parse_query, respond
from leaderboard.web.api.schemas import Competition as CompetitionSchema
from leaderboard.web.api.schemas import participation as schemas


@bp.get("/competitions/<slug>/participation")
@operation("Whether the caller may take part in a competition (its approval rule and their request)",
           schemas.Participation, auth="participant", errors=(404,), tag="participation")
def get_participation(slug: str) -> tuple[Response, int]:
    """Show the caller's request to take part, if any, and whether approval lets them submit."""
    user = require_user()
    competition = get_competition(context.ctx(), slug)
    state = participation.participation_state(context.ctx(), competition=competition, user=user)
    return respond(_state(competition, state))


@bp.post("/competitions/<slug>/participation")
@operation("Ask to take part in a competition that requires approval (asking again changes nothing)",
           schemas.Participation, auth="participant", errors=(404, 409), tag="participation")
def ask_participation(slug: str) -> tuple[Response, int]:
    """Ask to take part; the request stays pending until an organizer approves or refuses it."""
    state = participation.request_participation(context.ctx(), slug=slug, user=require_user())
    return respond(_state(get_competition(context.ctx(), slug), state))


@bp.get("/competitions/<slug>/participants")
@operation("A competition's requests to take part, pending first (managers only)", schemas.ParticipantList,
           auth="organizer", query=schemas.ParticipantsQuery, errors=(400, 403, 404), tag="participation")
def list_participants(slug: str) -> tuple[Response, int]:
    """List the requests to take part, with each account's email (for the organizers to judge)."""
    wanted = parse_query(schemas.ParticipantsQuery)
    rows = participation.list_participants(context.ctx(), slug=slug, actor=require_organizer(), status=wanted.status)
    competition = get_competition(context.ctx(), slug)
    return respond(schemas.ParticipantList(competition=slug, requires_approval=competition.requires_approval,
                                           participants=[_participant(row) for row in rows]))


@bp.post("/competitions/<slug>/participants/<id:user_id>/approve")
@operation("Approve an account's request to take part (managers only; audit-logged)", schemas.Participant,
           auth="organizer", errors=(403, 404), tag="participation")
def approve_participant(slug: str, user_id: int) -> tuple[Response, int]:
    """Approve a request: the account may submit from now on."""
    return _decide(slug, user_id, approve=True)


@bp.post("/competitions/<slug>/participants/<id:user_id>/refuse")
@operation("Refuse an account's request to take part (managers only; audit-logged)", schemas.Participant,
           auth="organizer", errors=(403, 404), tag="participation")
def refuse_participant(slug: str, user_id: int) -> tuple[Response, int]:
    """Refuse a request: the account cannot submit (an organizer may approve it later)."""
    return _decide(slug, user_id, approve=False)


@bp.post("/competitions/<slug>/settings")
@operation("Change a competition's title, description or participation approval (managers only)",
           CompetitionSchema, auth="organizer", body=schemas.CompetitionSettings, errors=(400, 403, 404),
           tag="organizers")
def update_competition(slug: str) -> tuple[Response, int]:
    """Change what the body gives; a left-out field stays as it is."""
    body = parse_json(schemas.CompetitionSettings)
    item = competitions.update_competition(context.ctx(), slug=slug, actor=require_organizer(), **body.model_dump(
        exclude_unset=True))
    return respond(serialize.competition(item))


def _decide(slug: str, user_id: int, *, approve: bool) -> tuple[Response, int]:
    """Approve or refuse one request for the calling organizer and answer the request's new state."""
    row = participation.decide(context.ctx(), slug=slug, user_id=user_id, approve=approve, actor=require_organizer())
    return respond(_participant(row))


def _state(competition: Competition, state: participation.ParticipationState) -> schemas.Participation:
    """Return a participation state as the API's Participation."""
    return schemas.Participation(competition=competition.slug, requires_approval=state.required,
                                 status=state.status,  # type: ignore[arg-type]
                                 may_submit=state.may_submit, rule=participation.approval_rule(competition))


def _participant(row: participation.Participant) -> schemas.Participant:
    """Return a request to take part as the API's Participant."""
    return schemas.Participant(user_id=row.user_id, display_name=row.display_name, email=row.email, team=row.team,
                               status=row.status,  # type: ignore[arg-type]
                               requested_at=as_aware_utc(row.requested_at),
                               decided_at=as_aware_utc(row.decided_at) if row.decided_at else None,
                               decided_by=row.decided_by)

