"""Alembic environment: builds its engine from DATABASE_URL or Settings, never the Flask app.

``alembic upgrade head`` is the release step of every deployment (systemd
ExecStartPre, Procfile ``release:``); ``create_app`` never migrates, so web workers
cannot race each other over the schema.
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from pathlib import Path

from alembic import context
from sqlalchemy import create_engine, pool
from sqlalchemy.engine import make_url

import leaderboard.models  # noqa: F401  (registers every table on Base.metadata)
from leaderboard.platform import Settings
from leaderboard.platform.db import Base, engine_url

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)
target_metadata = Base.metadata


def database_url() -> str:
    """Return the URL to migrate: sqlalchemy.url if set, DATABASE_URL, else the default SQLite file."""
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not url:
        # A placeholder key: migrating must not mint the instance's session secret.
        url = Settings.from_env(secret_key="unused-by-migrations").database_url
    return engine_url(url)


def ensure_sqlite_directory(url: str) -> None:
    """Create the directory of a SQLite database file (the data dir on first run)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


def configure_options(url: str) -> dict[str, object]:
    """Return the options every run shares; SQLite needs batch mode to alter tables."""
    return {
        "target_metadata": target_metadata,
        "compare_type": True,
        "render_as_batch": make_url(url).get_backend_name() == "sqlite",
    }


def run_migrations_offline() -> None:
    """Emit the migration SQL to stdout (alembic upgrade head --sql)."""
    url = database_url()
    context.configure(url=url, literal_binds=True, dialect_opts={"paramstyle": "named"}, **configure_options(url))
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate the database in one transaction per run."""
    url = database_url()
    ensure_sqlite_directory(url)
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            context.configure(connection=connection, **configure_options(url))
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
