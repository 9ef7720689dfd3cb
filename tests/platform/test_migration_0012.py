"""Migration 0012: existing phases are backfilled with their status now, so the first sweep sends no old event."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from alembic import command
from alembic_support import alembic_config
from sqlalchemy.orm import Session

from leaderboard.accounts import status_at
from leaderboard.notify import phase_notices
from leaderboard.platform.db import make_engine, utcnow


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """Return an empty database of each dialect the platform supports."""
    return empty_database_url


def run(url: str, *statements: str, **params: object) -> list[tuple[object, ...]]:
    """Execute statements in one transaction; return the rows of the last."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            result = None
            for statement in statements:
                result = connection.execute(sa.text(statement), params)
            return [tuple(row) for row in result] if result is not None and result.returns_rows else []
    finally:
        engine.dispose()


PHASE = ("INSERT INTO phases (id, competition_id, position, name, description, task_config, labels_key, "
         "labels_sha256, label_version, n_items, has_private_split, leaderboard_visibility, created_at, start_at, "
         "end_at, state_override) VALUES (:id, 1, :id, 'P', '', '{}', 'k', 'h', 1, 8, false, 'public', "
         "'2026-01-01 00:00:00', :start, :end, :override)")


def test_upgrading_backfills_each_phase_with_its_status_and_the_sweep_sends_nothing(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0011")
    now = utcnow()
    past, future = now - timedelta(days=2), now + timedelta(days=2)
    run(database_url, "INSERT INTO competitions (id, slug, title, description, created_at) "
                      "VALUES (1, 'c', 'C', '', '2026-01-01 00:00:00')")
    run(database_url, "INSERT INTO webhooks (id, competition_id, url, events, secret, active, created_at) "
                      "VALUES (1, 1, 'http://127.0.0.1:9/h', :events, 's', true, '2026-01-01 00:00:00')",
        events='["phase.opened", "phase.closed"]')
    for phase_id, start, end, override in [(1, past, future, None), (2, past, past, None), (3, future, None, None),
                                           (4, None, None, "open"), (5, None, None, None)]:
        run(database_url, PHASE, id=phase_id, start=start, end=end, override=override)
    command.upgrade(config, "0012")
    assert run(database_url, "SELECT id, announced_status FROM phases ORDER BY id") == [
        (1, "open"), (2, "closed"), (3, "upcoming"), (4, "open"), (5, "upcoming")]
    engine = make_engine(database_url)
    try:
        with Session(engine) as session:  # announce_due reads only its context's session
            assert phase_notices.announce_due(SimpleNamespace(session=session), status_of=status_at) == []  # type: ignore[arg-type]
    finally:
        engine.dispose()
    assert run(database_url, "SELECT count(*) FROM webhook_deliveries") == [(0,)]
    command.downgrade(config, "0011")
