"""Database engine, sessions, the declarative base with one naming convention, and how timestamps are stored.

Every stored timestamp is naive UTC: ``utcnow`` makes one, ``naive_utc`` turns any datetime
into one, ``as_aware_utc`` turns a stored one back into an aware one for serialization.
``engine_url`` is the one driver choice for a DATABASE_URL, shared with migrations/env.py.
"""

from __future__ import annotations

import select
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import overload

from sqlalchemy import MetaData, create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from leaderboard.platform.write_signal import on_committed_write, shared_stamp

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every Tailboard model."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def utcnow() -> datetime:
    """Return the current time as a naive UTC datetime (how every timestamp is stored)."""
    return datetime.now(UTC).replace(tzinfo=None)


@overload
def naive_utc(value: datetime) -> datetime: ...


@overload
def naive_utc(value: None) -> None: ...


def naive_utc(value: datetime | None) -> datetime | None:
    """Return value as naive UTC, how timestamps are stored: aware values are converted, naive ones taken as UTC."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


@overload
def as_aware_utc(value: datetime) -> datetime: ...


@overload
def as_aware_utc(value: None) -> None: ...


def as_aware_utc(value: datetime | None) -> datetime | None:
    """Return a stored naive-UTC timestamp as an aware one (it serializes with its offset)."""
    return None if value is None else value.replace(tzinfo=UTC)


def engine_url(url: str) -> str:
    """Return a database URL with the driver Tailboard uses: a bare postgresql:// means psycopg 3."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://"):]
    return url


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets foreign keys, WAL and a busy timeout."""
    url = engine_url(url)
    if url.startswith("sqlite"):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        stamp = shared_stamp(database) if database and database != ":memory:" else None
        if stamp is not None:  # every process writing this file tells every reader on the host (board_cache/watch.py)
            on_committed_write(engine, stamp.bump)
        return engine
    engine = create_engine(url)
    event.listen(engine, "checkin", _checked_in)
    event.listen(engine, "checkout", partial(_check_out, engine.dialect))
    return engine


PING_AFTER_SECONDS = 10.0
"""A pooled PostgreSQL connection idle longer than this is pinged before use (a hot one is checked locally)."""


def _checked_in(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
    record.info["idle_since"] = time.monotonic()


def _check_out(dialect, dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
    """Hand out a pooled connection only if it is alive; else the pool drops it and opens another.

    A ping costs a round trip per request, which under a rush was a third of a board read. So
    a connection back in the pool for less than PING_AFTER_SECONDS is checked locally: the
    server ended it (a restart, ``pg_terminate_backend``) if its socket has something to read
    while no query is in flight (the server's goodbye, or the end of the stream). One idle
    longer is pinged as well, for a server that vanished without a word. A connection lost
    after this check is the request's failure (503 with Retry-After, web/errors.py).
    """
    if dbapi_connection.closed or dbapi_connection.broken or _has_unread(dbapi_connection.fileno()):
        raise DisconnectionError("the server ended this pooled connection")
    idle = time.monotonic() - record.info.get("idle_since", time.monotonic())
    if idle >= PING_AFTER_SECONDS:
        try:  # the dialect's own ping: it leaves no transaction open behind it
            alive = dialect.do_ping(dbapi_connection)
        except Exception as error:  # dead: the pool opens another
            raise DisconnectionError("a pooled connection did not answer its ping") from error
        if not alive:
            raise DisconnectionError("a pooled connection did not answer its ping")


def _has_unread(fileno: int) -> bool:
    """Return whether an idle connection's socket has bytes (or its end) waiting, without waiting."""
    readable, _, _ = select.select([fileno], [], [], 0)
    return bool(readable)


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Return the session factory every service call uses."""
    return sessionmaker(bind=engine, expire_on_commit=False)
