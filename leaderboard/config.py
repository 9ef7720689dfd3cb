"""Settings, read once from the environment; every one has an embedded default."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    """Everything an instance needs to know about where it runs (SPEC §6)."""

    data_dir: Path
    labels_dir: Path
    database_url: str
    storage_url: str
    secret_key: str
    scoring_mode: str
    celery_broker_url: str | None
    ratelimit_storage_uri: str
    max_upload_bytes: int
    trusted_proxies: int = 0
    testing: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        """Build settings from environment variables, then apply explicit overrides."""
        env = os.environ if env is None else env
        data_dir = Path(overrides.pop("data_dir", None) or env.get("TAILBOARD_DATA_DIR", "instance")).resolve()
        labels_dir = Path(
            overrides.pop("labels_dir", None)
            or env.get("TAILBOARD_LABELS_DIR", str(PROJECT_ROOT / "hidden_labels"))
        ).resolve()
        settings = cls(
            data_dir=data_dir,
            labels_dir=labels_dir,
            database_url=env.get("DATABASE_URL") or f"sqlite:///{data_dir / 'tailboard.sqlite3'}",
            storage_url=env.get("TAILBOARD_STORAGE", "local"),
            secret_key=env.get("SECRET_KEY") or "",
            scoring_mode=env.get("TAILBOARD_SCORING", "inline"),
            celery_broker_url=env.get("CELERY_BROKER_URL"),
            ratelimit_storage_uri=env.get("RATELIMIT_STORAGE_URI", "memory://"),
            max_upload_bytes=int(env.get("TAILBOARD_MAX_UPLOAD_BYTES", str(100 * 1024 * 1024))),
            trusted_proxies=int(env.get("TAILBOARD_TRUSTED_PROXIES", "0")),
        )
        settings = replace(settings, **overrides)
        if settings.scoring_mode not in ("inline", "celery"):
            raise ValueError(f"TAILBOARD_SCORING must be 'inline' or 'celery', not {settings.scoring_mode!r}")
        if not settings.secret_key:
            settings = replace(settings, secret_key=_stored_secret_key(settings.data_dir))
        return settings


def _stored_secret_key(data_dir: Path) -> str:
    """Return the instance's secret key, generating it into the data dir on first use."""
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another worker won the race; use its key
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
