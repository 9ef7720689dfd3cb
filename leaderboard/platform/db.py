"""Database engine, sessions, the declarative base with one naming convention, and how timestamps are stored.

Every stored timestamp is naive UTC: ``utcnow`` makes one, ``naive_utc`` turns any datetime
into one, ``as_aware_utc`` turns a stored one back into an aware one for serialization.
``engine_url`` is the one driver choice for a DATABASE_URL, shared with migrations/env.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import overload

from sqlalchemy import MetaData, create_engine, event
from sqlalchemy.engine import Engine, make_url
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
    return create_engine(url, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Return the session factory every service call uses."""
    return sessionmaker(bind=engine, expire_on_commit=False)
