"""Every route, every id: absurd or missing ids are 404 pages, never a server error.

The crawl walks app.url_map, puts each id into each rule that takes one (0, -1, past
32 and 64 bits, a free id in range, and the real one), and requests it with every
method the rule allows, as an anonymous visitor, a participant and an organizer. The
app is built with CSRF checks off, so the empty POSTs reach the handlers.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.entries import teams
from leaderboard.models import Score
from leaderboard.organizing import notifications, phases

ID_ARG = re.compile(r"<(?:(?P<converter>[a-z]+)(?:\((?P<args>[^)]*)\))?:)?(?P<name>\w+)>")
OUT_OF_RANGE = (0, -1, 2**31, 2**63, 2**64 + 5)  # no row can have these ids: the route must not match
FREE_ID = 999_999  # in range, but no row has it
IDENTITIES = ("anonymous", "participant", "organizer")


@pytest.fixture
def world(app: Any, ctx: Any, make_organizer: Any, make_user: Any, make_competition: Any, make_phase: Any,
          make_token: Any, make_predictions: Any) -> dict[str, Any]:
    """Return an organizer, a participant, their tokens, an open phase of the organizer's with one submission, and
    real ids."""
    app.config["WTF_CSRF_ENABLED"] = False
    organizer, participant = make_organizer(), make_user()
    phase = make_phase(make_competition(created_by=organizer))
    tokens = {"organizer": make_token(organizer), "participant": make_token(participant), "anonymous": None}
    upload = app.test_client().post(
        f"/api/v1/phases/{phase.id}/submissions", headers={"Authorization": f"Bearer {tokens['participant']}"},
        data={"file": (io.BytesIO(make_predictions()), "p.csv")})
    assert upload.status_code == 202, upload.get_data(as_text=True)
    job = phases.rescore_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Crawlers", user=organizer)
    hook = notifications.register_webhook(ctx, slug=phase.competition.slug, url="https://example.org/hook",
                                          events=["board.changed"], actor=organizer)
    real = {"phase_id": phase.id, "submission_id": upload.get_json()["id"], "token_id": 1, "job_id": job.id,
            "team_id": team.id, "user_id": participant.id, "webhook_id": hook.id}
    return {"users": {"organizer": organizer, "participant": participant}, "tokens": tokens, "real": real,
            "slug": phase.competition.slug}


def rule_urls(app: Any, world: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """Yield (method, url, whether the id in it cannot exist) for every rule, method and id choice."""
    for rule in app.url_map.iter_rules():
        methods = sorted(rule.methods - {"HEAD", "OPTIONS"})
        id_args = [m.group("name") for m in ID_ARG.finditer(rule.rule) if m.group("converter") == "id"]
        choices: list[tuple[int | None, bool]] = [(None, False)]
        if id_args:
            choices = [(i, True) for i in (*OUT_OF_RANGE, FREE_ID)] + [(None, False)]
        for value, missing in choices:
            url = ID_ARG.sub(lambda m, value=value: fill(m, world, value), rule.rule)
            for method in methods:
                yield method, url, missing


def fill(match: re.Match[str], world: dict[str, Any], value: int | None) -> str:
    """Return the text for one URL argument: the id under test, a real id, or a plausible value."""
    converter, name = match.group("converter"), match.group("name")
    if converter == "id":
        return str(world["real"][name] if value is None else value)
    if converter == "any":
        return match.group("args").split(",")[0].strip()
    return {"slug": world["slug"], "name": "questions.jsonl", "filename": "css/tailboard.css"}.get(name, "x")


def request_as(client: Any, login: Any, world: dict[str, Any], identity: str, method: str, url: str) -> Any:
    """Send one request as identity: a fresh session login for the pages, a bearer token for the API."""
    client.cookie_jar.clear() if hasattr(client, "cookie_jar") else None
    with client.session_transaction() as session:
        session.clear()
    headers = {}
    if identity != "anonymous":
        login(client, world["users"][identity])
        headers["Authorization"] = f"Bearer {world['tokens'][identity]}"
    return client.open(url, method=method, headers=headers, data={} if method == "POST" else None)


def test_no_route_answers_a_server_error_and_impossible_ids_are_404(app: Any, client: Any, login: Any, ctx: Any,
                                                                     world: dict[str, Any]) -> None:
    """And no answer carries a score's slice fingerprints (digests of hidden counts: scores.slice_tables)."""
    errors, not_found_wrong, bodies = [], [], []
    crawled = 0
    for method, url, missing in rule_urls(app, world):
        for identity in IDENTITIES:
            response = request_as(client, login, world, identity, method, url)
            bodies.append(response.get_data())
            crawled += 1
            if response.status_code >= 500:
                errors.append(f"{identity} {method} {url} -> {response.status_code}")
            elif missing and not _answers_not_found(url, identity, method, response):
                not_found_wrong.append(f"{identity} {method} {url} -> {response.status_code}")
    assert crawled > 300
    assert errors == []
    assert not_found_wrong == [], "\n".join(not_found_wrong)
    fingerprints = {key.encode() for tables in ctx.session.scalars(select(Score.slice_tables)) if tables
                    for _, key in tables}
    assert fingerprints and not [key for key in fingerprints for body in bodies if key in body]


def _answers_not_found(url: str, identity: str, method: str, response: Any) -> bool:
    """Return whether a request for an id no row has got an acceptable answer.

    An impossible id (out of range) never matches a route: 404, whoever asks. A free id
    in range reaches the handler, which may first send an anonymous visitor to log in
    (302 to /login, or 401 from the API), refuse a participant an organizer's action
    (403), or refuse an empty POST form (400) before it looks the row up; never 2xx.
    """
    status = response.status_code
    if f"/{FREE_ID}" not in url:
        return status == 404
    if status == 302:
        return identity == "anonymous" and "/login" in response.location
    return status in (401, 403, 404) or (status == 400 and method == "POST")


@pytest.mark.parametrize("path", ["/phases/9223372036854775808", "/phases/18446744073709551621/leaderboard",
                                  "/submissions/9223372036854775808", "/api/v1/phases/9223372036854775808",
                                  "/organizer/phases/9223372036854775808/edit", "/phases/0", "/phases/-1"])
def test_ids_past_the_column_range_are_404_pages(client: Any, path: str) -> None:
    assert client.get(path).status_code == 404
