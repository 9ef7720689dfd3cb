"""Alembic rules: one head, migrations build exactly the models' schema, downgrade works.

When leaderboard/models/ changes, the drift test fails until a new revision exists:
`alembic revision --autogenerate -m "..."` against a database at head, then review it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic_support import alembic_config

import leaderboard.models  # noqa: F401  (registers every table)
from leaderboard.platform.db import Base, make_engine

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MODEL_TABLES = set(Base.metadata.tables)


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """Return an empty database of each dialect the platform supports."""
    return empty_database_url


def schema_drift(url: str) -> list[object]:
    """Return autogenerate's differences between the database at url and the models."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    """Return the names of the tables in the database at url."""
    engine = make_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_there_is_exactly_one_head() -> None:
    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    assert len(heads) == 1, f"merge the Alembic heads {heads}"


def test_upgrade_head_creates_exactly_the_models_schema(database_url: str) -> None:
    command.upgrade(alembic_config(database_url), "head")
    assert table_names(database_url) == MODEL_TABLES | {"alembic_version"}
    assert schema_drift(database_url) == []


def test_downgrade_base_drops_every_table_and_upgrade_rebuilds_them(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "head")
    command.downgrade(config, "base")
    assert table_names(database_url) == {"alembic_version"}
    command.upgrade(config, "head")
    assert schema_drift(database_url) == []


@pytest.mark.backends("sqlite")
def test_a_database_without_migrations_shows_drift(database_url: str) -> None:
    # Guards the drift test itself: compare_metadata must see the missing tables.
    assert len(schema_drift(database_url)) >= len(MODEL_TABLES)


def test_alembic_upgrade_head_from_the_project_root_creates_the_default_sqlite_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "not" / "yet" / "instance"
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "SECRET_KEY")}
    env["TAILBOARD_DATA_DIR"] = str(data_dir)
    probe = (
        "import sys\n"
        "from alembic.config import main\n"
        "main(argv=['upgrade', 'head'])\n"
        "flask_app = [m for m in sys.modules if m == 'app' or m.startswith('leaderboard.web')]\n"
        "assert not flask_app, f'env.py imported the Flask app: {flask_app}'\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], check=False, cwd=PROJECT_ROOT, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    database = data_dir / "tailboard.sqlite3"
    assert database.is_file()
    assert not (data_dir / "secret_key").exists(), "migrating must not mint the session secret"
    assert schema_drift(f"sqlite:///{database}") == []
