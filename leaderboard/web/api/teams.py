"""API handlers for teams (docs/ENTRIES.md): create one in a competition, join with its invite code, leave, read it."""

from __future__ import annotations

from flask import Response, url_for

from leaderboard.entries import teams
from leaderboard.platform.db import as_aware_utc
from leaderboard.web import context
from leaderboard.web.api.auth import require_user
from leaderboard.web.api.blueprint import bp
from leaderboard.web.api.openapi import operation
from leaderboard.web.api.parsing import parse_json, respond
from leaderboard.web.api.schemas import entries as schemas


@bp.post("/competitions/<slug>/teams")
@operation("Create a team in a competition; the caller joins it", schemas.Team, status=201, auth="participant",
           body=schemas.TeamCreate, errors=(400, 404, 409), tag="teams")
def create_team(slug: str) -> tuple[Response, int]:
    """Create a team; the answer carries its invite code."""
    user = require_user()
    body = parse_json(schemas.TeamCreate)
    team = teams.create_team(context.ctx(), competition_slug=slug, name=body.name, user=user)
    return respond(_team(teams.team_page(context.ctx(), team_id=team.id, viewer=user)), 201)


@bp.post("/teams/join")
@operation("Join a team with its invite code", schemas.Team, auth="participant", body=schemas.TeamJoin,
           errors=(400, 404, 409), tag="teams")
def join_team() -> tuple[Response, int]:
    """Join the team of an invite code (refused after having submitted to its competition)."""
    user = require_user()
    body = parse_json(schemas.TeamJoin)
    team = teams.join_team(context.ctx(), invite_code=body.invite_code, user=user)
    return respond(_team(teams.team_page(context.ctx(), team_id=team.id, viewer=user)))


@bp.post("/teams/<id:team_id>/leave")
@operation("Leave a team (only before its first submission)", schemas.TeamLeft, auth="participant",
           errors=(404, 409), tag="teams")
def leave_team(team_id: int) -> tuple[Response, int]:
    """Leave a team; the last member's leaving deletes it."""
    teams.leave_team(context.ctx(), team_id=team_id, user=require_user())
    return respond(schemas.TeamLeft(id=team_id, left=True))


@bp.get("/teams/<id:team_id>")
@operation("A team: members; invite code and entries for its members", schemas.Team, auth="participant",
           errors=(404,), tag="teams")
def get_team(team_id: int) -> tuple[Response, int]:
    """Show a team as the caller may see it."""
    return respond(_team(teams.team_page(context.ctx(), team_id=team_id, viewer=require_user())))


def _team(page: teams.TeamPage) -> schemas.Team:
    """Return a team page as the API's Team."""
    entries = None if page.entries is None else [
        schemas.TeamEntry(phase_id=e.phase_id, phase_name=e.phase_name, method=e.method, submissions=e.submissions,
                          selected=e.selected, last_submission_id=e.last_submission_id,
                          last_submitted_at=as_aware_utc(e.last_submitted_at))
        for e in page.entries]
    return schemas.Team(
        id=page.team.id, name=page.team.name, competition=page.competition.slug,
        members=[schemas.TeamMember(display_name=m.display_name, joined_at=as_aware_utc(m.joined_at))
                 for m in page.members],
        invite_code=page.invite_code, entries=entries, can_leave=page.can_leave,
        url=url_for("teams.team", team_id=page.team.id, _external=True),
    )
