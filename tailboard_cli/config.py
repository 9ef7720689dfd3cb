"""Where the client keeps the server address and token: one JSON file readable only by its owner."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "tailboard"


class NotLoggedIn(Exception):
    """No server address or token is configured."""


@dataclass(frozen=True)
class Profile:
    """The server's base URL and the personal API token used for it."""

    url: str
    token: str


def config_path() -> Path:
    """Return the config file path (TAILBOARD_CONFIG_DIR overrides the platform's config dir)."""
    base = os.environ.get("TAILBOARD_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME)
    return Path(base) / "config.json"


def load_profile() -> Profile:
    """Return the stored profile; TAILBOARD_URL and TAILBOARD_TOKEN override it (for CI jobs)."""
    stored: dict[str, str] = {}
    path = config_path()
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise NotLoggedIn(f"Cannot read {path}: {error}. Run 'tailboard login URL' again.") from None
    url = os.environ.get("TAILBOARD_URL") or stored.get("url")
    token = os.environ.get("TAILBOARD_TOKEN") or stored.get("token")
    if not url or not token:
        raise NotLoggedIn("Not logged in: run 'tailboard login URL' first.")
    return Profile(url=url, token=token)


def save_profile(profile: Profile) -> Path:
    """Write the profile with mode 0600 (created so, never world-readable even briefly)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"url": profile.url, "token": profile.token}, handle)
    os.chmod(tmp, 0o600)  # O_CREAT's mode is masked by umask and ignored for an existing file
    os.replace(tmp, path)
    return path


def normalize_url(url: str) -> str:
    """Return the server's base URL without a trailing slash or API suffix."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "https://" + url
    for suffix in ("/api/v1", "/api"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url
