"""Shared fixtures: settings and app over SQLite and PostgreSQL, service context, clients, factories.

Every test that asks for ``settings`` (or anything built on it: ``runtime``, ``ctx``,
``app``, ``client``, ``runner``, the ``make_*`` factories) runs twice, on SQLite and
on PostgreSQL. Opt out with ``@pytest.mark.backends("sqlite")`` (or ask for PostgreSQL
only with ``@pytest.mark.backends("postgres")``); ``-m "not postgres"`` skips the
PostgreSQL runs. PostgreSQL is the server at 127.0.0.1:5432 (user postgres, trust
auth; ``TAILBOARD_TEST_PG`` overrides the maintenance URL): each test process gets a
fresh database ``tb_test_<worker>_<pid>`` that is emptied before every test and
dropped at the end. When the server is unreachable those runs are skipped, or fail
loudly when the environment variable CI is set.

Data and hidden labels live in ``tmp_path``; scoring is inline.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from instance_snapshot import create_schema, hermetic_settings
from reachability import unreachable
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import object_session
from sqlalchemy.pool import NullPool

from leaderboard.accounts import OPERATOR
from leaderboard.board import CELLS_AHEAD, board_changed
from leaderboard.models import Competition, Phase, User
from leaderboard.operations import run_job
from leaderboard.platform import Runtime, ServiceContext, Settings, build_runtime
from leaderboard.platform.db import Base
from leaderboard.submissions import score_submission
from leaderboard.web.board_cache.watch import BoardWatch
from leaderboard.workers.job_worker import JobWorker
from leaderboard.workers.sweeper import Sweeper

PG_ADMIN_URL = os.environ.get("TAILBOARD_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
DEFAULT_PASSWORD = "correct horse battery"

# The tiny phase every factory uses: 8 binary items, two categories, head/tail
# popularity, a contrast group, and (with private=True) half the items private.
TINY_ITEMS: list[dict[str, Any]] = [
    {"id": "q1", "label": "true", "category": "science", "popularity": "head", "split": "public"},
    {"id": "q2", "label": "false", "category": "science", "popularity": "head", "split": "public"},
    {"id": "q3", "label": "true", "category": "history", "popularity": "tail", "split": "public"},
    {"id": "q4", "label": "false", "category": "history", "popularity": "tail", "split": "public"},
    {"id": "q5", "label": "true", "category": "science", "popularity": "head", "split": "private"},
    {"id": "q6", "label": "false", "category": "history", "popularity": "tail", "split": "private"},
    {"id": "q7", "label": "true", "category": "science", "popularity": "tail", "split": "private"},
    {"id": "q8", "label": "true", "category": "history", "popularity": "head", "split": "private"},
]


def pytest_configure(config: pytest.Config) -> None:
    """Register the backends marker."""
    config.addinivalue_line(
        "markers", "backends(*names): run only on these database backends ('sqlite', 'postgres')"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the backend runs a test opted out of with @pytest.mark.backends(...)."""
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("db_backend") if callspec is not None else None
        marker = item.get_closest_marker("backends")
        (dropped if backend and marker and backend not in marker.args else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# --- databases ---------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_backend(request: pytest.FixtureRequest) -> str:
    """Return the database backend of this run: 'sqlite' or 'postgres'."""
    return str(request.param)


@pytest.fixture(scope="session")
def postgres_session_url() -> Iterator[str]:
    """Create this test process's PostgreSQL database with the schema; drop it at the end."""
    name = f"tb_test_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as connection:
            _drop_orphans(connection)
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except OperationalError as error:
        unreachable(f"PostgreSQL at {make_url(PG_ADMIN_URL).render_as_string()} is unreachable: {error}")
    url = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    engine = create_engine(url, poolclass=NullPool)
    Base.metadata.create_all(engine)
    engine.dispose()
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def throwaway_postgres_url() -> Iterator[str]:
    """Create an empty PostgreSQL database (no schema) for one test; drop it after."""
    name = f"tb_test_throwaway_{next(_THROWAWAY)}_{os.getpid()}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except OperationalError as error:
        unreachable(f"PostgreSQL at {make_url(PG_ADMIN_URL).render_as_string()} is unreachable: {error}")
    yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


_THROWAWAY = itertools.count()


# werkzeug's default, scrypt:32768:8:1, costs ~0.15 s a hash (and as much per form login); the suite
# creates thousands of accounts. Tests hash with scrypt at 1/32 of that cost; check_password_hash
# reads the parameters from the stored hash. tests/accounts/test_password_hash.py checks the default.
TEST_PASSWORD_HASH = "scrypt:1024:8:1"


@pytest.fixture(scope="session", autouse=True)
def _cheap_password_hashes() -> Iterator[None]:
    """Hash the passwords of test accounts with a cheap scrypt (the largest cost of building test worlds)."""
    from werkzeug.security import generate_password_hash

    from leaderboard.accounts import users

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(users, "generate_password_hash",
                      functools.partial(generate_password_hash, method=TEST_PASSWORD_HASH))
        yield


@pytest.fixture(autouse=True)
def _background_threads_end_with_their_test(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Stop the job, sweep and board-watch threads an app of this test started (job and sweep: without ``testing``).

    Left running, they would keep polling a database the test dropped, and their logged
    tracebacks race other tests' ``ast.parse`` (CPython 3.11 formats tracebacks with it).
    """
    started: list[Any] = []
    for cls in (JobWorker, Sweeper, BoardWatch):
        original = cls.start

        def start(self: Any, original: Callable[[Any], None] = original) -> None:
            started.append(self)
            original(self)

        monkeypatch.setattr(cls, "start", start)
    yield
    for worker in started:
        worker.stop()


@pytest.fixture
def empty_database_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Return an empty database (no schema) on this run's backend: a SQLite file or a throwaway PostgreSQL."""
    if db_backend == "postgres":
        return str(request.getfixturevalue("throwaway_postgres_url"))
    return f"sqlite:///{tmp_path / 'empty.sqlite3'}"


def _drop_orphans(connection: Any) -> None:
    """Drop test databases left by killed runs: their process id (the name's suffix) is gone."""
    names = connection.execute(text("SELECT datname FROM pg_database WHERE datname LIKE 'tb\\_test\\_%'")).scalars()
    for stale in list(names):
        pid = stale.rsplit("_", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            connection.execute(text(f'DROP DATABASE IF EXISTS "{stale}" WITH (FORCE)'))


def _alive(pid: int) -> bool:
    """Return whether a process with this id runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _empty_postgres(url: str) -> None:
    """Cut the previous test's leftover connections, empty every table and restart every sequence.

    DELETE, children first, costs a fraction of a TRUNCATE of every table (which makes new
    files for each table and index); TRUNCATE stays the fallback should a DELETE be refused.
    """
    engine = create_engine(url, poolclass=NullPool)
    tables = Base.metadata.sorted_tables
    with engine.begin() as connection:
        connection.execute(text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ))
    try:
        with engine.begin() as connection:
            for table in reversed(tables):
                connection.execute(text(f'DELETE FROM "{table.name}"'))
            connection.execute(text(
                "SELECT setval(format('%I.%I', schemaname, sequencename), 1, false) FROM pg_sequences "
                "WHERE schemaname = 'public' AND last_value IS NOT NULL"
            ))
    except DBAPIError:
        with engine.begin() as connection:
            names = ", ".join(f'"{t.name}"' for t in tables)
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture(scope="session")
def sqlite_schema_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a SQLite file with the schema and no rows, created once per test process."""
    path = tmp_path_factory.mktemp("schema") / "tailboard.sqlite3"
    create_schema(f"sqlite:///{path}")
    return path


@pytest.fixture
def database_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Return the URL of an empty database with the schema, on this run's backend.

    SQLite: a copy of the session's empty schema file (a copy costs far less than creating the tables).
    """
    if db_backend == "postgres":
        url: str = request.getfixturevalue("postgres_session_url")
        _empty_postgres(url)
        return url
    path = tmp_path / "tailboard.sqlite3"
    shutil.copyfile(request.getfixturevalue("sqlite_schema_file"), path)
    return f"sqlite:///{path}"


# --- the instance --------------------------------------------------------------------------


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Return Settings fields a test module wants changed (override this fixture)."""
    return {}


@pytest.fixture
def settings(database_url: str, tmp_path: Path, settings_overrides: dict[str, Any]) -> Settings:
    """Return hermetic settings: tmp data and label dirs, local storage, inline scoring."""
    return hermetic_settings(database_url, tmp_path, settings_overrides)


@pytest.fixture
def app(settings: Settings) -> Iterator[Any]:
    """Return the Flask app built on settings (its runtime is the ``runtime`` fixture)."""
    from leaderboard import create_app

    application = create_app(dataclasses.asdict(settings))
    yield application
    application.extensions["tailboard"].engine.dispose()


@pytest.fixture
def runtime(request: pytest.FixtureRequest, settings: Settings) -> Iterator[Runtime]:
    """Return the instance runtime: the app's when the test uses the app, else a fresh one."""
    if "app" in request.fixturenames:
        yield request.getfixturevalue("app").extensions["tailboard"]
        return
    built = build_runtime(settings, score=score_submission, board_changed=board_changed, run_job=run_job,
                          board_cells=CELLS_AHEAD)
    yield built
    built.engine.dispose()


@pytest.fixture
def ctx(runtime: Runtime) -> Iterator[ServiceContext]:
    """Return a service context with its own session, closed after the test."""
    session = runtime.sessions()
    yield runtime.context(session)
    session.close()


@pytest.fixture
def client(app: Any) -> Any:
    """Return a test client of the app."""
    return app.test_client()


@pytest.fixture
def runner(app: Any) -> Any:
    """Return a CLI runner of the app (``runner.invoke(args=[...])``)."""
    return app.test_cli_runner()


# --- factories -----------------------------------------------------------------------------


def tiny_labels(*, private: bool = False, items: list[dict[str, Any]] | None = None) -> bytes:
    """Return the tiny label file (JSON Lines); without private, no item has a split."""
    records = [dict(item) for item in (items or TINY_ITEMS)]
    if not private:
        for record in records:
            record.pop("split", None)
    return ("\n".join(json.dumps(r) for r in records) + "\n").encode("utf-8")


def predictions_csv(labels: bytes | None = None, *, wrong: int | set[str] = 0,
                    abstain: set[str] = frozenset()) -> bytes:  # type: ignore[assignment]
    """Return an id,prediction CSV for a binary label file: right except ``wrong`` (the first n ids, or these ids)."""
    records = [json.loads(line) for line in (labels or tiny_labels()).decode().splitlines() if line.strip()]
    wrong_ids = {r["id"] for r in records[:wrong]} if isinstance(wrong, int) else set(wrong)
    lines = ["id,prediction"]
    for record in records:
        truth = str(record["label"]).lower() in ("true", "yes", "1")
        answer = "" if record["id"] in abstain else str(truth != (record["id"] in wrong_ids)).lower()
        lines.append(f"{record['id']},{answer}")
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture
def labels_file() -> Callable[..., bytes]:
    """Return tiny_labels(*, private=False, items=None): the tiny label file as bytes."""
    return tiny_labels


@pytest.fixture
def make_predictions() -> Callable[..., bytes]:
    """Return predictions_csv(labels=None, *, wrong=0, abstain=set()): a CSV prediction file."""
    return predictions_csv


@pytest.fixture
def make_user(ctx: ServiceContext) -> Callable[..., User]:
    """Return a factory of participant accounts (password DEFAULT_PASSWORD unless given)."""
    from leaderboard import accounts

    counter = itertools.count(1)

    def make(email: str | None = None, *, password: str = DEFAULT_PASSWORD, display_name: str | None = None,
             is_organizer: bool = False) -> User:
        n = next(counter)
        return accounts.register_user(
            ctx, email=email or f"{'org' if is_organizer else 'user'}{n}@example.com", password=password,
            display_name=display_name, is_organizer=is_organizer,
        )

    return make


@pytest.fixture
def make_organizer(make_user: Callable[..., User]) -> Callable[..., User]:
    """Return a factory of organizer accounts."""
    return lambda email=None, **kwargs: make_user(email, is_organizer=True, **kwargs)


@pytest.fixture
def make_competition(ctx: ServiceContext) -> Callable[..., Competition]:
    """Return a factory of competitions (slugs comp-1, ...); without created_by, only the operator manages them."""
    from leaderboard.organizing import competitions

    counter = itertools.count(1)

    def make(slug: str | None = None, *, title: str | None = None, description: str = "",
             created_by: User | None = None) -> Competition:
        n = next(counter)
        return competitions.create_competition(
            ctx, slug=slug or f"comp-{n}", title=title or f"Competition {n}", description=description,
            actor=created_by or OPERATOR)

    return make


@pytest.fixture
def make_phase(ctx: ServiceContext, make_competition: Callable[..., Competition]) -> Callable[..., Phase]:
    """Return a factory of phases on the tiny label file, opened unless status says otherwise.

    ``make_phase(competition=None, *, status="open"|"upcoming"|"closed", private=False,
    labels=None, config=None, **create_phase_fields)``.
    """
    from leaderboard.organizing import phases

    def make(competition: Competition | None = None, *, status: str = "open", private: bool = False,
             labels: bytes | None = None, config: dict[str, Any] | None = None, name: str = "Phase 1",
             **fields: Any) -> Phase:
        competition = competition or make_competition()
        phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, name=name,
                                    labels=labels or tiny_labels(private=private), config=config, **fields)
        if status == "open":
            phase = phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
        elif status == "closed":
            phase = phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
        return phase

    return make


@pytest.fixture
def make_token(ctx: ServiceContext) -> Callable[[User], str]:
    """Return a factory of API tokens: make_token(user) -> plaintext."""
    from leaderboard import accounts

    return lambda user: accounts.create_token(ctx, user=user)[1]


@pytest.fixture
def login() -> Callable[[Any, User], None]:
    """Return login(client, user): log the web client in as user (Flask-Login session, no form)."""

    def log_in(test_client: Any, user: User) -> None:
        attached = object_session(user)  # read the version afresh: a logout since the user was loaded bumped it
        version = user.session_version if attached is None else attached.scalar(
            select(User.session_version).where(User.id == user.id))
        with test_client.session_transaction() as session:
            session["_user_id"] = str(user.id)
            session["_fresh"] = True
            session["_session_version"] = version  # what a real login stores (leaderboard.web.security)

    return log_in


@pytest.fixture
def csrf_token() -> Callable[[Any, str], str]:
    """Return csrf_token(client, path): the CSRF token of the form on the page at path."""

    def token(test_client: Any, path: str) -> str:
        page = test_client.get(path).get_data(as_text=True)
        found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page) or re.search(
            r'value="([^"]+)"[^>]*name="csrf_token"', page)
        assert found, f"no csrf_token field on {path}"
        return found.group(1)

    return token
