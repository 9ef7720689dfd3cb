"""Anonymous board reads trust a remembered state only until a change is signalled (web/board_cache/watch.py).

These run on a database built by the migrations (PostgreSQL's notifying triggers are in
0007). "Elsewhere" is a separate engine, as a Celery worker or another gunicorn worker
would have: on SQLite one made by ``db.make_engine`` (every Tailboard process writes the
shared stamp), on PostgreSQL any connection (the triggers notify). ``MAX_AGE_SECONDS`` is
raised to an hour, so only a signal can make a read see a change made elsewhere: the
twin tests write without one (PostgreSQL without its triggers, SQLite through the
sqlite3 module) and show the read then stays stale.
"""

from __future__ import annotations

import io
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic_support import alembic_config
from sqlalchemy import event, text

from leaderboard.platform.db import make_engine
from leaderboard.submissions import accept_submission
from leaderboard.web.board_cache import middleware
from leaderboard.web.board_cache.watch import APPLICATION_NAME

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def database_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Return an empty database of this run's backend migrated to head (with PostgreSQL's notifying triggers)."""
    if db_backend == "postgres":
        url = str(request.getfixturevalue("throwaway_postgres_url"))
    else:
        url = f"sqlite:///{tmp_path / 'watched.sqlite3'}"
    command.upgrade(alembic_config(url), "head")
    return url


@pytest.fixture(autouse=True)
def _only_notifications_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(middleware, "MAX_AGE_SECONDS", 3600.0)


@pytest.fixture
def elsewhere(database_url: str) -> Iterator[Callable[..., None]]:
    """Return a function running one SQL statement in its own committed transaction, in another engine."""
    engine = make_engine(database_url)

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


@pytest.mark.backends("sqlite")
def test_a_change_in_another_process_on_sqlite_is_seen_at_once(app, client, board, database_url):
    script = ("import sys; from sqlalchemy import text; from leaderboard.platform.db import make_engine\n"
              "with make_engine(sys.argv[1]).begin() as c:\n"
              "    c.execute(text(\"UPDATE phases SET name = 'Renamed by a worker'\"))")
    subprocess.run([sys.executable, "-c", script, database_url], cwd=ROOT, check=True, timeout=60)
    assert b"Renamed by a worker" in client.get(board).data  # no wait: the other process moved the shared stamp


@pytest.mark.backends("sqlite")
def test_a_write_without_the_stamp_stays_unseen_on_sqlite(app, client, board, database_url):
    outside = sqlite3.connect(database_url.removeprefix("sqlite:///"))
    outside.execute("UPDATE phases SET name = 'Renamed in the shell'")
    outside.commit()
    outside.close()
    assert b"Before" in client.get(board).data and b"Renamed in the shell" not in client.get(board).data


@pytest.mark.backends("postgres")
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


@pytest.mark.backends("postgres")
def test_a_lost_listening_connection_is_replaced_and_nothing_is_trusted_meanwhile(app, client, board, elsewhere):
    watch = app.wsgi_app.watch
    elsewhere("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name",
              name=APPLICATION_NAME)
    elsewhere("UPDATE phases SET name = 'Renamed while deaf'")
    assert wait_for(lambda: b"Renamed while deaf" in client.get(board).data)
    assert wait_for(lambda: watch.listening), "the watch did not listen again"
    elsewhere("UPDATE phases SET name = 'Renamed after'")
    assert wait_for(lambda: b"Renamed after" in client.get(board).data)


@pytest.mark.backends("postgres")
def test_a_schema_without_triggers_is_never_trusted(app, client, ctx, make_phase, elsewhere):
    elsewhere("DROP FUNCTION tailboard_board_notify() CASCADE")
    phase = make_phase(name="Untrusted")
    client.get(f"/phases/{phase.id}/leaderboard")
    watch = app.wsgi_app.watch
    assert watch.thread is not None and wait_for(lambda: not watch.thread.is_alive())
    assert not watch.listening and not app.wsgi_app.memo
