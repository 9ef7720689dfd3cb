"""Migration 0006 keys quota rows by owner: an instance upgraded from 0005 keeps every user's counts, and a
downgrade gives users their rows back (a team's rows cannot be split among its members and are dropped)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command
from alembic_support import alembic_config

from leaderboard.platform.db import make_engine


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """Return an empty database of each dialect the platform supports."""
    return empty_database_url


def run(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Execute statements in one transaction; return the rows of the last."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            result = None
            for statement in statements:
                result = connection.execute(sa.text(statement))
            return [tuple(row) for row in result] if result is not None and result.returns_rows else []
    finally:
        engine.dispose()


SEED = [
    "INSERT INTO users (id, email, display_name, password_hash, is_organizer, session_version, created_at) "
    "VALUES (7, 'a@example.org', 'A', 'x', false, 0, '2026-01-01 00:00:00')",
    "INSERT INTO competitions (id, slug, title, description, created_at) "
    "VALUES (1, 'c', 'C', '', '2026-01-01 00:00:00')",
    "INSERT INTO phases (id, competition_id, position, name, description, task_config, labels_key, labels_sha256, "
    "label_version, n_items, has_private_split, leaderboard_visibility, created_at) "
    "VALUES (3, 1, 1, 'P', '', '{}', 'k', 'h', 1, 8, false, 'public', '2026-01-01 00:00:00')",
    "INSERT INTO quota_usage (phase_id, user_id, day, used) VALUES (3, 7, '2026-01-01', 2), (3, 7, 'total', 5)",
]


def test_upgrading_keeps_each_users_counts_as_their_own_owner_rows(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0005")
    run(database_url, *SEED)
    command.upgrade(config, "0006")
    rows = run(database_url, "SELECT phase_id, owner, day, used FROM quota_usage ORDER BY day")
    assert rows == [(3, "user:7", "2026-01-01", 2), (3, "user:7", "total", 5)]
    run(database_url, "INSERT INTO quota_usage (phase_id, owner, day, used) VALUES (3, 'team:1', 'total', 4)")
    command.downgrade(config, "0005")
    rows = run(database_url, "SELECT phase_id, user_id, day, used FROM quota_usage ORDER BY day")
    assert rows == [(3, 7, "2026-01-01", 2), (3, 7, "total", 5)]
