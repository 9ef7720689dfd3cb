"""Build a SQLite instance once per module, give each test its own copy.

A test module whose tests all start from the same expensive instance (dozens of scored
submissions) builds it once with ``build_snapshot`` in a module-scoped fixture and
overrides ``database_url`` to ``restore_snapshot`` it into each test's ``tmp_path``: the
database file, the uploaded files and the hidden labels are copied, so a test that writes
changes only its own copy. SQLite only (a snapshot is a folder of files); mark such a
module ``backends("sqlite")`` and ``xdist_group(...)`` so that one worker builds it once.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from leaderboard.board import board_changed
from leaderboard.operations import run_job
from leaderboard.platform import ServiceContext, Settings, build_runtime
from leaderboard.platform.db import Base
from leaderboard.submissions import score_submission

DATABASE_FILE = "tailboard.sqlite3"


def hermetic_settings(database_url: str, root: Path, overrides: dict[str, Any]) -> Settings:
    """Return test settings under root: data and label dirs, local storage, inline scoring."""
    data_dir = root / "data"
    data_dir.mkdir(exist_ok=True)
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "labels_dir": root / "labels",
        "database_url": database_url,
        "storage_url": "local",
        "secret_key": "test-secret-key",
        "scoring_mode": "inline",
        "celery_broker_url": None,
        "ratelimit_storage_uri": "memory://",
        "testing": True,
    }
    values.update(overrides)
    return Settings.from_env({}, **values)


def create_schema(database_url: str) -> str:
    """Create every table in the database at database_url; return the URL."""
    engine = create_engine(database_url, poolclass=NullPool)
    Base.metadata.create_all(engine)
    engine.dispose()
    return database_url


def build_snapshot(root: Path, build: Callable[[ServiceContext], object],
                   overrides: dict[str, Any] | None = None) -> Path:
    """Build a SQLite instance under root with build(ctx) (which commits its work); return root."""
    url = create_schema(f"sqlite:///{root / DATABASE_FILE}")
    runtime = build_runtime(hermetic_settings(url, root, overrides or {}), score=score_submission,
                            board_changed=board_changed, run_job=run_job)
    session = runtime.sessions()
    try:
        build(runtime.context(session))
        session.commit()
    finally:
        session.close()
        runtime.engine.dispose()
    return root


def restore_snapshot(snapshot: Path, tmp_path: Path) -> str:
    """Copy the snapshot's database and files into tmp_path; return the copy's database URL."""
    shutil.copytree(snapshot, tmp_path, dirs_exist_ok=True)
    return f"sqlite:///{tmp_path / DATABASE_FILE}"
