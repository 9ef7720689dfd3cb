"""Embedded scoring runs on a scorer thread of the serving process: an upload returns before it is scored."""

from __future__ import annotations

import dataclasses
import io
import threading
import time

import pytest

from leaderboard import create_app
from leaderboard.board import BoardQuery, ranking
from leaderboard.models import Submission
from leaderboard.submissions import accept_submission, scoring_runs
from leaderboard.workers import scorer

WAIT_CEILING = 60.0
"""Generous ceiling on waiting for the scorer thread (an event, not a timed assertion)."""


def wait_for_board(ctx, phase_id: int, name: str) -> list[str]:
    """Read the board until name shows (or the ceiling passes); return the names last read."""
    deadline = time.monotonic() + WAIT_CEILING
    while True:
        ctx.session.commit()
        names = [row.display_name for row in ranking.leaderboard(
            ctx, phase_id=phase_id, query=BoardQuery(every_row=True)).rows]
        if name in names or time.monotonic() > deadline:
            return names
        time.sleep(0.05)


def wait_for_status(ctx, submission_id: int, status: str) -> str:
    """Poll the submission until it has status (or the ceiling passes); return the last status read."""
    deadline = time.monotonic() + WAIT_CEILING
    while True:
        ctx.session.expire_all()
        found = ctx.session.get(Submission, submission_id).status
        if found == status or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(("changes", "threaded"), [
    ({"testing": False}, True),
    ({"testing": True}, False),
    ({"testing": False, "scoring_mode": "celery", "celery_broker_url": "memory://"}, False),
], ids=["embedded", "tests", "celery"])
def test_only_an_embedded_instance_outside_tests_scores_on_a_thread(settings, changes, threaded):
    app = create_app({**dataclasses.asdict(settings), **changes})
    runtime = app.extensions["tailboard"]
    assert isinstance(runtime.dispatcher, scorer.ScoringWorker) is threaded
    assert ("tailboard_scorer" in app.extensions) is threaded
    runtime.engine.dispose()


def test_an_upload_returns_queued_and_the_scorer_thread_puts_it_on_the_board(ctx, make_phase, make_user,
                                                                            make_predictions, monkeypatch):
    phase, user = make_phase(), make_user(display_name="threaded uploader")
    worker = scorer.ScoringWorker(ctx.runtime)
    monkeypatch.setattr(ctx.runtime, "dispatcher", worker)
    release = threading.Event()
    original = scoring_runs.score_next

    def held(run_ctx):
        release.wait(WAIT_CEILING)  # the scorer waits until the upload has returned
        return original(run_ctx)

    monkeypatch.setattr(scoring_runs, "score_next", held)
    worker.start()  # what a serving process's first request does
    try:
        submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                       stream=io.BytesIO(make_predictions(wrong=1)))
        assert submission.status == "queued"  # returned without scoring: the thread does it
        release.set()
        assert wait_for_status(ctx, submission.id, "scored") == "scored"
        assert "threaded uploader" in wait_for_board(ctx, phase.id, "threaded uploader")
    finally:
        release.set()
        worker.stop()


def test_one_wake_up_scores_every_ready_submission(ctx, make_phase, make_user, make_predictions, monkeypatch):
    phase = make_phase()

    class Lost:
        def dispatch(self, submission_id: int) -> None:
            """Lose the wake-up, as a killed process would."""

    monkeypatch.setattr(ctx.runtime, "dispatcher", Lost())
    ids = [accept_submission(ctx, phase_id=phase.id, user=make_user(), filename="p.csv",
                             stream=io.BytesIO(make_predictions())).id for _ in range(3)]
    worker = scorer.ScoringWorker(ctx.runtime)
    assert sorted(worker.drain()) == sorted(ids)
    ctx.session.expire_all()
    assert {ctx.session.get(Submission, i).status for i in ids} == {"scored"}
    assert worker.drain() == []


@pytest.mark.backends("sqlite")
def test_a_process_starts_its_scorer_threads_once_however_many_requests_start_them(runtime):
    worker = scorer.ScoringWorker(runtime)

    def scorer_threads() -> int:
        return sum(1 for t in threading.enumerate() if t.name == scorer.ScoringWorker.name and t.is_alive())

    before = scorer_threads()
    try:
        for n in range(3):
            worker.start()
            worker.dispatch(n)
        assert scorer_threads() == before + worker.threads == before + scorer.SQLITE_THREADS
    finally:
        worker.stop()


def test_ten_scores_announced_to_the_refresher_are_built_by_one_refresh(runtime, ctx, make_phase, make_user,
                                                                         make_predictions, monkeypatch):
    from leaderboard.board import versions
    from leaderboard.models import Board
    from leaderboard.workers import board_refresher
    from leaderboard.workers.board_refresher import BoardRefresher

    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="on the board"), filename="p.csv",
                      stream=io.BytesIO(make_predictions()))
    refresher = BoardRefresher(runtime)
    monkeypatch.setattr(refresher, "start", lambda: None)  # its round is run below, by hand
    monkeypatch.setattr(board_refresher, "PACE_SECONDS", 0)  # the board was refreshed a moment ago, by the upload
    monkeypatch.setattr(ctx.runtime, "board_changed", refresher.board_changed)
    users = [make_user(display_name=f"stream-{n}") for n in range(10)]
    for n, user in enumerate(users):  # each scored and announced; none waits for a refresh
        accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                          stream=io.BytesIO(make_predictions(wrong=n % 8)))
    ctx.session.expire_all()
    stand = ctx.session.get(Board, phase.id)
    assert stand.built < stand.wanted
    rebuilds: list[int] = []
    original = versions.rebuild
    ours = ctx.settings.database_url  # another test's refresher thread may still be finishing its paced round

    def counted(context, **kwargs):
        if context.settings.database_url == ours:
            rebuilds.append(1)
        return original(context, **kwargs)

    monkeypatch.setattr(versions, "rebuild", counted)
    assert refresher.run_once() == [phase.id]
    assert len(rebuilds) == 1
    ctx.session.expire_all()
    stand = ctx.session.get(Board, phase.id)
    assert stand.built == stand.wanted
    names = [row.display_name for row in ranking.leaderboard(ctx, phase_id=phase.id,
                                                             query=BoardQuery(every_row=True)).rows]
    assert {u.display_name for u in users} <= set(names)


def test_a_score_whose_announcement_failed_is_announced_again_and_reaches_the_board(runtime, ctx, make_phase,
                                                                                     make_user, make_predictions,
                                                                                     monkeypatch):
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    from leaderboard.workers import board_refresher

    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    refresher = board_refresher.BoardRefresher(runtime)
    monkeypatch.setattr(refresher, "start", lambda: None)  # its rounds are run below, by hand
    monkeypatch.setattr(board_refresher, "PACE_SECONDS", 0)
    monkeypatch.setattr(ctx.runtime, "board_changed", refresher.board_changed)
    real = board_refresher.announce_change
    failures = [PoolTimeout("QueuePool limit of size 5 overflow 10 reached")] * 2

    def flaky(*args, **kwargs):
        if failures:
            raise failures.pop()
        return real(*args, **kwargs)

    monkeypatch.setattr(board_refresher, "announce_change", flaky)
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="unlucky"), filename="p.csv",
                      stream=io.BytesIO(make_predictions()))  # scored; its announcement fails
    refresher.run_once()  # fails once more: kept
    assert "unlucky" not in [r.display_name for r in ranking.leaderboard(
        ctx, phase_id=phase.id, query=BoardQuery(every_row=True)).rows]
    refresher.run_once()
    ctx.session.commit()
    assert "unlucky" in [r.display_name for r in ranking.leaderboard(
        ctx, phase_id=phase.id, query=BoardQuery(every_row=True)).rows]


def test_before_its_threads_start_a_dispatch_scores_in_the_foreground_as_a_command_does(ctx, make_phase, make_user,
                                                                                         make_predictions,
                                                                                         monkeypatch):
    phase = make_phase()
    worker = scorer.ScoringWorker(ctx.runtime)
    monkeypatch.setattr(ctx.runtime, "dispatcher", worker)
    submission = accept_submission(ctx, phase_id=phase.id, user=make_user(), filename="p.csv",
                                   stream=io.BytesIO(make_predictions()))
    assert submission.status == "scored"  # scored before accept_submission returned, no thread started


def test_a_refresher_waits_a_pace_after_the_boards_last_refresh_whichever_process_made_it(
        runtime, ctx, make_phase, make_user, make_predictions, monkeypatch):
    from datetime import timedelta

    from sqlalchemy import update

    from leaderboard.models import Board
    from leaderboard.platform.db import utcnow
    from leaderboard.workers import board_refresher

    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    refresher = board_refresher.BoardRefresher(runtime)
    monkeypatch.setattr(refresher, "start", lambda: None)
    monkeypatch.setattr(ctx.runtime, "board_changed", refresher.board_changed)
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="paced"), filename="p.csv",
                      stream=io.BytesIO(make_predictions()))
    ctx.session.execute(update(Board).where(Board.phase_id == phase.id).values(refreshed_at=utcnow()))
    ctx.session.commit()  # another process refreshed this board just now
    assert refresher.run_once() == [] and 0 < refresher._delay <= board_refresher.PACE_SECONDS
    assert "paced" not in [r.display_name for r in ranking.leaderboard(ctx, phase_id=phase.id,
                                                                       query=BoardQuery(every_row=True)).rows]
    earlier = utcnow() - timedelta(seconds=board_refresher.PACE_SECONDS)
    ctx.session.execute(update(Board).where(Board.phase_id == phase.id).values(refreshed_at=earlier))
    ctx.session.commit()  # a pace later: the change it kept is refreshed
    assert refresher.run_once() == [phase.id]
    ctx.session.expire_all()
    assert "paced" in [r.display_name for r in ranking.leaderboard(ctx, phase_id=phase.id,
                                                                   query=BoardQuery(every_row=True)).rows]
