"""A stream of scores coalesces into few board refreshes, and readers never wait for a refresh under way."""

from __future__ import annotations

import io
import threading
import time

from sqlalchemy import select

from leaderboard.board import BoardQuery, board_changed, ranking, versions
from leaderboard.models import Board, User
from leaderboard.submissions import accept_submission

BURST = 10
CEILING = 30.0
"""Generous ceiling on waiting for other threads (events, not timed assertions)."""


def wanted(runtime, phase_id: int) -> int:
    """Return the phase's announced changes, read in a fresh session."""
    with runtime.sessions() as session:
        return int(session.scalar(select(Board.wanted).where(Board.phase_id == phase_id)) or 0)


def scored_unannounced(ctx, monkeypatch, *, phase_id: int, users: list[User], make_predictions) -> list[int]:
    """Upload and score one file per user without announcing them to the board; return their ids."""
    with monkeypatch.context() as quiet:
        quiet.setattr(ctx.runtime, "board_changed", lambda *args, **kwargs: None)
        return [accept_submission(ctx, phase_id=phase_id, user=user, filename="p.csv",
                                  stream=io.BytesIO(make_predictions(wrong=n % 8))).id
                for n, user in enumerate(users)]


def test_ten_scores_in_a_burst_make_fewer_refreshes_than_ten_and_the_board_shows_all_ten(
        runtime, ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="already on the board"), filename="p.csv",
                      stream=io.BytesIO(make_predictions()))
    users = [make_user(display_name=f"burst-{n}") for n in range(BURST)]
    ids = scored_unannounced(ctx, monkeypatch, phase_id=phase.id, users=users, make_predictions=make_predictions)
    before = wanted(runtime, phase.id)
    rebuilds: list[int] = []
    original = versions.rebuild

    def counted(*args, **kwargs):
        if not rebuilds:  # the first refresh lasts until the whole burst is announced, as a slow one would
            deadline = time.monotonic() + CEILING
            while wanted(runtime, phase.id) < before + BURST and time.monotonic() < deadline:
                time.sleep(0.02)
        rebuilds.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(versions, "rebuild", counted)
    barrier = threading.Barrier(BURST)

    def score_announced(submission_id: int) -> None:
        with runtime.sessions() as session:
            barrier.wait()
            board_changed(runtime.context(session), phase_id=phase.id, submission_ids=[submission_id])

    threads = [threading.Thread(target=score_announced, args=(i,)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(CEILING * 2)
    assert 1 <= len(rebuilds) < BURST
    ctx.session.expire_all()
    names = [r.display_name for r in ranking.leaderboard(ctx, phase_id=phase.id,
                                                         query=BoardQuery(every_row=True)).rows]
    assert {u.display_name for u in users} <= set(names)
    stand = ctx.session.scalar(select(Board).where(Board.phase_id == phase.id))
    assert stand.built == stand.wanted == before + BURST


def test_a_reader_does_not_wait_for_a_refresh_under_way_and_sees_the_change_once_it_is_built(
        runtime, ctx, make_phase, make_user, make_predictions, monkeypatch, caplog):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="first"), filename="p.csv",
                      stream=io.BytesIO(make_predictions()))
    late = make_user(display_name="late")
    [submission_id] = scored_unannounced(ctx, monkeypatch, phase_id=phase.id, users=[late],
                                         make_predictions=make_predictions)
    started, release = threading.Event(), threading.Event()
    original = versions.rebuild

    def slow(*args, **kwargs):
        started.set()
        release.wait(CEILING * 2)
        return original(*args, **kwargs)

    monkeypatch.setattr(versions, "rebuild", slow)

    def writer() -> None:
        with runtime.sessions() as session:
            board_changed(runtime.context(session), phase_id=phase.id, submission_ids=[submission_id])

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert started.wait(CEILING)
        ctx.session.expire_all()
        names = [r.display_name for r in ranking.leaderboard(ctx, phase_id=phase.id,
                                                             query=BoardQuery(every_row=True)).rows]
        assert thread.is_alive()  # the reader answered while the refresh was still held up
        assert not [r for r in caplog.records if "refreshing the board" in r.getMessage()]  # not a lock timeout
        assert "first" in names and "late" not in names  # the rows as they were: its writer has not returned
    finally:
        release.set()
        thread.join(CEILING * 2)
    ctx.session.commit()
    names = [r.display_name for r in ranking.leaderboard(ctx, phase_id=phase.id,
                                                         query=BoardQuery(every_row=True)).rows]
    assert "late" in names
