"""The project's Alembic config, for tests that migrate a database themselves."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def alembic_config(url: str) -> Config:
    """Return the project's Alembic config pointed at url."""
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["configure_logger"] = False  # keep pytest's log capture
    return config
