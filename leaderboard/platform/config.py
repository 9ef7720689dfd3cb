"""Settings, read once from the environment; every one has an embedded default."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from leaderboard.platform.smtp import parse_smtp_url

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LEGACY_LABELS_DIR = PROJECT_ROOT / "hidden_labels"
"""The label dir every instance of a checkout shared before labels moved under the data dir."""


@dataclass(frozen=True)
class Settings:
    """Everything an instance needs to know about where it runs (docs/RUNNING.md#settings)."""

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
    https: bool = False  # served over HTTPS only: HSTS and Secure cookies (TAILBOARD_HTTPS=1)
    legacy_labels_dir: Path | None = None  # read-only fallback for label keys written before labels moved
    # Recovery of platform failures (submissions/recovery.py): how often the sweep runs (0: no
    # embedded timer), when unfinished work counts as abandoned, the first retry delay
    # (doubling up to an hour), and the S3 connect/read timeout. A scoring run or a job holds a
    # lease of lease_seconds it renews every lease_seconds / 4; once it lapses the sweep takes
    # the work back (platform/leases.py).
    sweep_seconds: float = 10.0
    stale_seconds: float = 900.0
    lease_seconds: float = 20.0
    retry_seconds: float = 30.0
    storage_timeout_seconds: float = 30.0
    api_ratelimit: str = "300 per minute"  # every API call of one token or address (a Flask-Limiter string)
    # Mail (leaderboard/platform/smtp.py, notify/outbox.py): without an SMTP URL no mail is sent and email
    # confirmation is off. The outbox is sent every mail_seconds (0: no embedded sender thread).
    smtp_url: str | None = None
    mail_from: str | None = None
    mail_seconds: float = 10.0
    testing: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from environment variables, then apply explicit overrides."""
        env = os.environ if env is None else env
        data_dir = Path(overrides.pop("data_dir", None) or env.get("TAILBOARD_DATA_DIR", "instance")).resolve()
        explicit_labels = overrides.pop("labels_dir", None) or env.get("TAILBOARD_LABELS_DIR")
        # Each instance keeps its labels under its own data dir, so two instances of one
        # checkout never share a label directory unless told to (keys are content-addressed anyway).
        labels_dir = Path(explicit_labels or data_dir / "hidden_labels").resolve()
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
            https=env.get("TAILBOARD_HTTPS", "").strip().lower() in ("1", "true", "yes", "on"),
            legacy_labels_dir=None if explicit_labels else LEGACY_LABELS_DIR,
            sweep_seconds=float(env.get("TAILBOARD_SWEEP_SECONDS", "10")),
            stale_seconds=float(env.get("TAILBOARD_STALE_SECONDS", "900")),
            lease_seconds=float(env.get("TAILBOARD_LEASE_SECONDS", "20")),
            retry_seconds=float(env.get("TAILBOARD_RETRY_SECONDS", "30")),
            storage_timeout_seconds=float(env.get("TAILBOARD_STORAGE_TIMEOUT", "30")),
            api_ratelimit=env.get("TAILBOARD_API_RATELIMIT", "300 per minute"),
            smtp_url=env.get("TAILBOARD_SMTP_URL") or None,
            mail_from=env.get("TAILBOARD_MAIL_FROM") or None,
            mail_seconds=float(env.get("TAILBOARD_MAIL_SECONDS", "10")),
        )
        settings = replace(settings, **overrides)
        if settings.scoring_mode not in ("inline", "celery"):
            raise ValueError(f"TAILBOARD_SCORING must be 'inline' or 'celery', not {settings.scoring_mode!r}")
        _check_mail(settings)
        if not settings.secret_key:
            settings = replace(settings, secret_key=_stored_secret_key(settings.data_dir))
        return settings


def _check_mail(settings: Settings) -> None:
    """Raise ValueError when the mail settings cannot work: a bad SMTP URL, or one without a sender address."""
    if not settings.smtp_url:
        return
    parse_smtp_url(settings.smtp_url)
    if not settings.mail_from:
        raise ValueError("TAILBOARD_MAIL_FROM (the sender address, e.g. tailboard@example.org) is needed when "
                         "TAILBOARD_SMTP_URL is set")


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
