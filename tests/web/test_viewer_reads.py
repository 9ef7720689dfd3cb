"""Logged-in and token board reads answered in front of the app (leaderboard/web/board_cache/viewers.py).

The micro-cache answers a viewer's read from the body every reader shares, the page
around it as that viewer sees it, and marks read from the rows' owners and the viewer's
teams now. Each test reads the same page through that path and through the app
(``viewers.enabled`` off) and wants the same answer, and checks that whatever makes a
viewer's answer different (a logout elsewhere, a revoked token, a new team, a new name,
a flashed message, the API's rate limit) is seen at the next read.
"""

from __future__ import annotations

import re

from sqlalchemy import update

from leaderboard import accounts
from leaderboard.models import ApiToken, Team, TeamMember, User
from tests.web.test_board_reads import marked_names, world

CSRF = re.compile(r'(name="csrf_token" value=")[^"]*(")')


def without_csrf(page: str) -> str:
    """Return a page with its CSRF tokens' values blanked (each render signs the session's secret anew)."""
    return CSRF.sub(r"\1\2", page)


def fast(app) -> int:
    """Return how many reads the cache's viewer path has answered so far."""
    return app.wsgi_app.viewers.answered


def read_twice(app, client, path: str, headers: dict[str, str] | None = None):
    """Read path until the viewer path answers it (at most four reads); return that answer."""
    before = fast(app)
    for _ in range(4):
        answer = client.get(path, headers=headers or {})
        if fast(app) > before:
            return answer
    raise AssertionError(f"the viewer path never answered {path}")


def a_second_later(app) -> None:
    """Forget the viewer checks the cache remembers (REMEMBER_SECONDS): what reads see a second later."""
    app.wsgi_app.viewers.checked.clear()


def through_app(app, client, path: str, headers: dict[str, str] | None = None):
    """Read path with the viewer path off: the app's own answer."""
    app.wsgi_app.viewers.enabled = False
    try:
        before = fast(app)
        answer = client.get(path, headers=headers or {})
        assert fast(app) == before
        return answer
    finally:
        app.wsgi_app.viewers.enabled = True


def test_a_logged_in_page_from_the_cache_is_the_page_the_app_renders(ctx, app, make_phase, make_user,
                                                                       make_predictions, login):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/phases/{phase.id}/leaderboard"
    expected = {"ann": ["Ann"], "bob": ["Tail Team"], "cy": ["Tail Team"], "dee": ["Dee"], "eve": []}
    for who, user in people.items():
        client = app.test_client()
        login(client, user)
        cached = read_twice(app, client, path)
        rendered = through_app(app, client, path)
        assert cached.status_code == rendered.status_code == 200
        assert without_csrf(cached.get_data(as_text=True)) == without_csrf(rendered.get_data(as_text=True)), who
        assert marked_names(cached.get_data(as_text=True)) == expected[who]
        assert f">{user.display_name}</a></li>" in cached.get_data(as_text=True)
        for name in ("Content-Type", "Cache-Control", "Content-Security-Policy", "X-Frame-Options"):
            assert cached.headers.get(name) == rendered.headers.get(name), name
        assert "Set-Cookie" not in cached.headers and "ETag" not in cached.headers
        assert int(cached.headers["Content-Length"]) == len(cached.data)


def test_the_csrf_token_of_a_cached_page_logs_out(ctx, app, make_phase, make_user, make_predictions, login):
    app.config["WTF_CSRF_ENABLED"] = True
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    client = app.test_client()
    login(client, people["ann"])
    page = read_twice(app, client, f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    token = CSRF.search(page)
    assert token is not None
    value = page[token.end(1):token.start(2)]
    out = client.post("/logout", data={"csrf_token": value})
    assert out.status_code == 303
    assert ">Ann</a></li>" not in client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)


def test_a_token_answer_from_the_cache_is_the_apps_answer(ctx, app, make_phase, make_user, make_predictions,
                                                          make_token):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/api/v1/phases/{phase.id}/leaderboard"
    for who, expected in (("bob", ["Tail Team"]), ("dee", ["Dee"]), ("eve", [])):
        caller = {"Authorization": f"Bearer {make_token(people[who])}"}
        client = app.test_client()
        cached = read_twice(app, client, path, caller)
        rendered = through_app(app, client, path, caller)
        assert cached.data == rendered.data
        assert [r["display_name"] for r in cached.get_json()["rows"] if r["mine"]] == expected
        assert cached.headers["Cache-Control"] == rendered.headers["Cache-Control"] == "private, no-cache"


def test_a_logout_elsewhere_ends_a_cached_session_at_its_next_read(ctx, app, make_phase, make_user,
                                                                   make_predictions, login):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/phases/{phase.id}/leaderboard"
    client = app.test_client()
    login(client, people["ann"])
    assert ">Ann</a></li>" in read_twice(app, client, path).get_data(as_text=True)
    accounts.end_sessions(ctx, user=people["ann"])  # what a logout in another browser does
    ctx.session.commit()
    a_second_later(app)
    page = client.get(path).get_data(as_text=True)
    assert ">Ann</a></li>" not in page and "Log in" in page and marked_names(page) == []


def test_a_revoked_token_is_refused_at_its_next_read(ctx, app, make_phase, make_user, make_predictions,
                                                     make_token):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/api/v1/phases/{phase.id}/leaderboard"
    caller = {"Authorization": f"Bearer {make_token(people['dee'])}"}
    client = app.test_client()
    assert read_twice(app, client, path, caller).status_code == 200
    revoked = update(ApiToken).where(ApiToken.user_id == people["dee"].id).values(revoked_at=ApiToken.created_at)
    ctx.session.execute(revoked)
    ctx.session.commit()
    a_second_later(app)
    assert client.get(path, headers=caller).status_code == 401


def test_a_new_team_a_new_name_and_a_flash_show_at_the_next_read(ctx, app, make_phase, make_user,
                                                                 make_predictions, login):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/phases/{phase.id}/leaderboard"
    client = app.test_client()
    login(client, people["eve"])
    assert marked_names(read_twice(app, client, path).get_data(as_text=True)) == []
    team = ctx.session.query(Team).filter_by(name="Tail Team").one()
    ctx.session.add(TeamMember(team_id=team.id, user_id=people["eve"].id, competition_id=phase.competition_id))
    ctx.session.execute(update(User).where(User.id == people["eve"].id).values(display_name="Eve Renamed"))
    ctx.session.commit()
    a_second_later(app)
    page = read_twice(app, client, path).get_data(as_text=True)
    assert marked_names(page) == ["Tail Team"] and ">Eve Renamed</a></li>" in page and ">Eve</a></li>" not in page
    with client.session_transaction() as session:
        session["_flashes"] = [("success", "Flashed for Eve only")]
    before = fast(app)
    assert "Flashed for Eve only" in client.get(path).get_data(as_text=True)
    assert fast(app) == before  # a flashed message is rendered by the app, once
    assert "Flashed for Eve only" not in client.get(path).get_data(as_text=True)


def test_a_score_moves_the_cached_answer_of_every_viewer(ctx, app, make_phase, make_user, make_predictions, login):
    from tests.web.test_board_reads import upload

    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/phases/{phase.id}/leaderboard"
    client = app.test_client()
    login(client, people["eve"])
    assert marked_names(read_twice(app, client, path).get_data(as_text=True)) == []
    upload(ctx, phase, people["eve"], make_predictions(wrong=0))
    page = client.get(path).get_data(as_text=True)
    assert marked_names(page) == ["Eve"]
    assert marked_names(read_twice(app, client, path).get_data(as_text=True)) == ["Eve"]


def test_token_reads_answered_in_front_count_in_the_apps_rate_limit_bucket(ctx, app, make_phase, make_user,
                                                                           make_predictions, make_token):
    app.config["API_RATELIMIT"] = "5 per minute"
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/api/v1/phases/{phase.id}/leaderboard"
    caller = {"Authorization": f"Bearer {make_token(people['ann'])}"}
    client = app.test_client()
    before = fast(app)
    statuses = [client.get(path, headers=caller).status_code for _ in range(5)]
    # the first read went to the app, which noted the token's use; the second to the app, which left its parts
    assert statuses == [200] * 5 and fast(app) - before == 3
    refused = client.get(path, headers=caller)  # the bucket holds five reads, wherever they were answered
    assert refused.status_code == 429 and "Retry-After" in refused.headers


def test_a_viewer_check_is_remembered_for_a_second_at_most(ctx, app, make_phase, make_user, make_predictions,
                                                           login, monkeypatch):
    from leaderboard.web.board_cache import viewers

    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/phases/{phase.id}/leaderboard"
    client = app.test_client()
    login(client, people["ann"])
    assert ">Ann</a></li>" in read_twice(app, client, path).get_data(as_text=True)
    accounts.end_sessions(ctx, user=people["ann"])
    ctx.session.commit()
    assert ">Ann</a></li>" in client.get(path).get_data(as_text=True)  # within the second: the check remembered
    now = viewers.time.monotonic()
    monkeypatch.setattr(viewers.time, "monotonic", lambda: now + viewers.REMEMBER_SECONDS + 0.01)
    assert ">Ann</a></li>" not in client.get(path).get_data(as_text=True)  # a second later: logged out
