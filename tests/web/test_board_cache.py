"""The micro-cache in front of the app: anonymous board reads come from it, never stale, never personal."""

from __future__ import annotations

import io
import threading

from flask import request
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.board import ranking
from leaderboard.board import read as board_read
from leaderboard.models import Board
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission
from leaderboard.web.api import phases as api_phases
from leaderboard.web.board_cache.middleware import SHOWN_VERSION


def upload(ctx, phase, user, content: bytes) -> None:
    """Accept content as an upload by user (scored inline)."""
    accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def cache_of(app):
    """Return the app's BoardCache middleware."""
    return app.wsgi_app


def test_anonymous_reads_are_kept_and_a_board_change_is_seen_at_once(app, client, ctx, make_phase, make_user,
                                                                      make_predictions):
    phase = make_phase()
    upload(ctx, phase, make_user(display_name="first-entrant"), make_predictions(wrong=2))
    for path in (f"/phases/{phase.id}/leaderboard", f"/api/v1/phases/{phase.id}/leaderboard"):
        first = client.get(path)
        assert first.status_code == 200 and b"first-entrant" in first.data
        assert len(cache_of(app).stored) >= 1
        again = client.get(path)
        assert again.data == first.data and again.headers["ETag"] == first.headers["ETag"]
        assert again.headers["Content-Security-Policy"] == first.headers["Content-Security-Policy"]
        assert client.get(path, headers={"If-None-Match": first.headers["ETag"]}).status_code == 304
    upload(ctx, phase, make_user(display_name="second-entrant"), make_predictions(wrong=0))
    for path in (f"/phases/{phase.id}/leaderboard", f"/api/v1/phases/{phase.id}/leaderboard"):
        assert b"second-entrant" in client.get(path).data
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    assert b"closed" in client.get(f"/phases/{phase.id}/leaderboard").data


def test_personal_and_hidden_reads_are_never_kept(app, client, ctx, make_phase, make_user, make_token,
                                                  make_predictions, login):
    hidden = make_phase(leaderboard_visibility="hidden")
    assert client.get(f"/phases/{hidden.id}/leaderboard").status_code == 403
    assert client.get(f"/api/v1/phases/{hidden.id}/leaderboard").status_code == 403
    assert not cache_of(app).stored
    phase = make_phase()
    user = make_user(display_name="token-holder")
    upload(ctx, phase, user, make_predictions(wrong=1))
    mine = client.get(f"/api/v1/phases/{phase.id}/leaderboard",
                      headers={"Authorization": f"Bearer {make_token(user)}"}).get_json()
    assert [r["mine"] for r in mine["rows"] if r["display_name"] == "token-holder"] == [True]
    login(client, user)
    page = client.get(f"/phases/{phase.id}/leaderboard")
    assert b"yours" in page.data and "ETag" not in page.headers
    assert not cache_of(app).stored


def test_a_failed_state_check_sends_the_read_to_the_app(app, client, ctx, make_phase, make_user, make_predictions):
    from sqlalchemy.exc import OperationalError

    phase = make_phase()
    upload(ctx, phase, make_user(display_name="only-entrant"), make_predictions(wrong=1))

    class Dropped:
        def connect(self):
            raise OperationalError("SELECT", {}, Exception("server closed the connection unexpectedly"))

    cache_of(app).engine = Dropped()
    response = client.get(f"/phases/{phase.id}/leaderboard")
    assert response.status_code == 200 and b"only-entrant" in response.data
    assert not cache_of(app).stored  # nothing was kept on the way


class LoadingElsewhere(dict):
    """board/read.py's in-flight loads as they are while another thread loads every view asked for."""

    def setdefault(self, key, default=None):
        """Return a lock some other thread holds."""
        held = threading.Lock()
        held.acquire()
        return held


def board_version(ctx, phase) -> int:
    """Return the phase's board version in the database now."""
    ctx.session.expire_all()
    return ctx.session.scalar(select(Board.version).where(Board.phase_id == phase.id))


def test_the_version_before_shown_while_a_new_one_loads_is_never_kept_as_the_new_one(
        app, client, ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase = make_phase()
    upload(ctx, phase, make_user(display_name="first-entrant"), make_predictions(wrong=2))
    paths = (f"/phases/{phase.id}/leaderboard", f"/api/v1/phases/{phase.id}/leaderboard")
    for path in paths:
        assert b"first-entrant" in client.get(path).data  # this process now keeps the board's view
    upload(ctx, phase, make_user(display_name="second-entrant"), make_predictions(wrong=0))
    with monkeypatch.context() as busy:
        busy.setattr(board_read, "_loading", LoadingElsewhere())
        busy.setattr(ranking, "changed_lately", lambda: False)  # readers other than this test's writing thread
        for path in paths:
            meanwhile = client.get(path)  # shown the version before at once, not made to wait
            assert meanwhile.status_code == 200 and b"first-entrant" in meanwhile.data
            assert b"second-entrant" not in meanwhile.data
    for path in paths:
        assert b"second-entrant" in client.get(path).data


def test_twin_kept_under_the_new_version_the_older_answer_would_be_served_on(
        app, client, ctx, make_phase, make_user, make_predictions, monkeypatch):
    """The twin: an app that says it shows the version the cache asked for leaves the older board kept."""
    phase = make_phase()
    upload(ctx, phase, make_user(display_name="first-entrant"), make_predictions(wrong=2))
    path = f"/api/v1/phases/{phase.id}/leaderboard"
    assert b"first-entrant" in client.get(path).data
    upload(ctx, phase, make_user(display_name="second-entrant"), make_predictions(wrong=0))
    monkeypatch.setattr(api_phases, "note_shown_version", lambda version: request.environ.__setitem__(
        SHOWN_VERSION, board_version(ctx, phase)))
    with monkeypatch.context() as busy:
        busy.setattr(board_read, "_loading", LoadingElsewhere())
        busy.setattr(ranking, "changed_lately", lambda: False)  # readers other than this test's writing thread
        assert b"second-entrant" not in client.get(path).data
    assert b"second-entrant" not in client.get(path).data  # stale until the next version
