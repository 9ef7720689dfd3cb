"""PostgreSQL: anonymous board reads trust a remembered state only until a change is notified (board_watch.py).

These run on a database built by the migrations (the notifying triggers are in 0007);
"elsewhere" is a separate engine, as a Celery worker or another gunicorn worker would be.
``MAX_AGE_SECONDS`` is raised to an hour, so only a notification can make a read see a
change made elsewhere: the twin test drops the triggers and shows the read then stays stale.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator

import pytest
from alembic import command
from alembic_support import alembic_config
from sqlalchemy import create_engine, event, text
from sqlalchemy.pool import NullPool

from leaderboard import board_cache
from leaderboard.board_watch import APPLICATION_NAME
from leaderboard.services.submissions import accept_submission


@pytest.fixture
def database_url(throwaway_postgres_url: str) -> str:
    """Return an empty PostgreSQL database migrated to head (with the notifying triggers)."""
    command.upgrade(alembic_config(throwaway_postgres_url), "head")
    return throwaway_postgres_url


@pytest.fixture(autouse=True)
def _only_notifications_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(board_cache, "MAX_AGE_SECONDS", 3600.0)


@pytest.fixture
def elsewhere(database_url: str) -> Iterator[Callable[..., None]]:
    """Return a function running one SQL statement in its own committed transaction, outside the app."""
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://"), poolclass=NullPool)

    def run(sql: str, **params: object) -> None:
        with engine.begin() as connection:
            connection.execute(text(sql), params)

    yield run
    engine.dispose()


def wait_for(predicate: Callable[[], bool], seconds: float = 15.0) -> bool:
    """Poll predicate until it holds or seconds pass; return whether it held."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def board(app, client, ctx, make_phase, make_user, make_predictions) -> str:
    """Return the path of an open phase's board with one entry, its state remembered by a listening cache."""
    phase = make_phase(name="Before")
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="entrant"), filename="p.csv",
                      stream=io.BytesIO(make_predictions(wrong=1)))
    path = f"/phases/{phase.id}/leaderboard"
    assert b"Before" in client.get(path).data  # starts the watch
    assert wait_for(lambda: app.wsgi_app.watch.listening), "the board watch never listened"
    assert b"Before" in client.get(path).data  # remembered from here on
    assert phase.id in app.wsgi_app.memo
    return path


def queries_during(app, action: Callable[[], object]) -> int:
    """Return how many SQL statements the app's engine ran during action."""
    count = 0

    def counted(*_: object) -> None:
        nonlocal count
        count += 1

    engine = app.extensions["tailboard"].engine
    event.listen(engine, "before_cursor_execute", counted)
    try:
        action()
    finally:
        event.remove(engine, "before_cursor_execute", counted)
    return count


def test_a_remembered_read_asks_nothing_and_a_change_elsewhere_is_notified(app, client, board, elsewhere):
    assert queries_during(app, lambda: client.get(board)) == 0
    elsewhere("UPDATE phases SET name = 'Renamed by a worker'")
    assert wait_for(lambda: b"Renamed by a worker" in client.get(board).data)


def test_without_the_triggers_a_change_elsewhere_stays_unseen(app, client, board, elsewhere):
    watch = app.wsgi_app.watch
    elsewhere("DROP TRIGGER tailboard_board_notify ON phases")
    for attempt in range(5):  # a fault test killing every connection would make the watch reconnect (and re-ask)
        generation = watch.generation
        elsewhere("UPDATE phases SET name = :name", name=f"Unseen {attempt}")
        time.sleep(1.0)
        page = client.get(board).data
        if watch.generation == generation and watch.listening:
            assert f"Unseen {attempt}".encode() not in page  # the remembered state answered: stale
            return
    pytest.fail("the watch kept reconnecting")


def test_a_change_this_process_commits_is_seen_at_once(app, client, board, ctx):
    from leaderboard.models import Phase

    phase = ctx.session.query(Phase).one()
    phase.name = "Renamed here"
    ctx.session.commit()
    assert b"Renamed here" in client.get(board).data  # no wait: the commit itself moved the generation


def test_a_lost_listening_connection_is_replaced_and_nothing_is_trusted_meanwhile(app, client, board, elsewhere):
    watch = app.wsgi_app.watch
    elsewhere("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name",
              name=APPLICATION_NAME)
    elsewhere("UPDATE phases SET name = 'Renamed while deaf'")
    assert wait_for(lambda: b"Renamed while deaf" in client.get(board).data)
    assert wait_for(lambda: watch.listening), "the watch did not listen again"
    elsewhere("UPDATE phases SET name = 'Renamed after'")
    assert wait_for(lambda: b"Renamed after" in client.get(board).data)


def test_a_schema_without_triggers_is_never_trusted(app, client, ctx, make_phase, elsewhere):
    elsewhere("DROP FUNCTION tailboard_board_notify() CASCADE")
    phase = make_phase(name="Untrusted")
    client.get(f"/phases/{phase.id}/leaderboard")
    watch = app.wsgi_app.watch
    assert watch.thread is not None and wait_for(lambda: not watch.thread.is_alive())
    assert not watch.listening and not app.wsgi_app.memo
