"""Migration 0009: stored scores draw their dither from their file, and phases ranked by a metric path get primaries.

A score stored before draws existed would otherwise draw from its exact figures (an
equality oracle across such scores); a score of a phase ranked by
``popularity.tail.accuracy`` stored no primary value, so the ladder and the participant's
list had none.
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from alembic import command
from alembic_support import alembic_config

from leaderboard.platform.db import make_engine

RESULTS = {"n_items": 8, "overall": {"accuracy": 0.5, "n": 8},
           "popularity": {"head": {"accuracy": 0.75}, "tail": {"accuracy": 0.25}}}


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


SEED = [
    "INSERT INTO users (id, email, display_name, password_hash, is_organizer, session_version, created_at) "
    "VALUES (7, 'a@example.org', 'A', 'x', false, 0, '2026-01-01 00:00:00')",
    "INSERT INTO competitions (id, slug, title, description, created_at) "
    "VALUES (1, 'c', 'C', '', '2026-01-01 00:00:00')",
    "INSERT INTO phases (id, competition_id, position, name, description, task_config, labels_key, labels_sha256, "
    "label_version, n_items, has_private_split, leaderboard_visibility, created_at) "
    "VALUES (3, 1, 1, 'P', '', :config, 'k', 'h', 1, 8, false, 'public', '2026-01-01 00:00:00')",
    "INSERT INTO submissions (id, phase_id, user_id, description, filename, file_key, file_sha256, file_size, status, "
    "is_baseline, attempts, method, selected, created_at, updated_at) VALUES (5, 3, 7, '', 'p.csv', 'f', :digest, 9, "
    "'scored', false, 0, 'default', false, '2026-01-01 00:00:00', '2026-01-01 00:00:00')",
    "INSERT INTO scores (id, submission_id, label_version, results, public_primary, created_at) "
    "VALUES (11, 5, 1, :results, NULL, '2026-01-01 00:00:00')",
]


def test_upgrading_gives_each_score_its_files_draw_and_a_path_primary_its_value(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0008")
    run(database_url, *SEED, config=json.dumps({"primary_metric": "popularity.tail.accuracy"}),
        digest="ab" * 32, results=json.dumps(RESULTS))
    command.upgrade(config, "0009")
    [(results, public)] = run(database_url, "SELECT results, public_primary FROM scores WHERE id = 11")
    stored = json.loads(results) if isinstance(results, str) else results
    assert stored["draw"] == {"answers": "ab" * 16, "confidences": "ab" * 16}
    assert public == 0.25
    run(database_url, "INSERT INTO score_cells (score_id, board, path, phase_id, value, error) "
                      "VALUES (11, 'open', 'accuracy', 3, 0.5, 0.1)")
    command.downgrade(config, "0008")
    assert run(database_url, "SELECT value FROM score_cells") == [(0.5,)]
