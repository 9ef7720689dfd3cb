"""deploy/ describes one coherent machine: the embedded setup needs no settings, state lives in
/var/lib/tailboard (the only place the units may write), and env.example agrees with the units."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.platform import Settings

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DEPLOY = PROJECT_ROOT / "deploy"
UNITS = ["tailboard-release.service", "tailboard-web.service", "tailboard-worker.service"]
STATE = "/var/lib/tailboard"


def active_settings(text: str) -> dict[str, str]:
    """Return the KEY=value lines of an env file that are not commented out."""
    return dict(re.findall(r"^([A-Z_][A-Z0-9_]*)=(.*)$", text, re.MULTILINE))


def test_env_example_as_shipped_is_the_embedded_setup_and_postgres_redis_are_commented_out() -> None:
    text = (DEPLOY / "env.example").read_text()
    active = active_settings(text)
    assert not any("postgresql" in v or "redis" in v for v in active.values()), active
    assert re.search(r"^#DATABASE_URL=postgresql://", text, re.MULTILINE)
    assert re.search(r"^#CELERY_BROKER_URL=redis://", text, re.MULTILINE)
    assert re.search(r"^#TAILBOARD_SCORING=celery$", text, re.MULTILINE)
    settings = Settings.from_env({**active, "SECRET_KEY": "x"})
    assert settings.database_url == f"sqlite:///{STATE}/tailboard.sqlite3"
    assert str(settings.labels_dir).startswith(STATE + "/")
    assert (settings.scoring_mode, settings.storage_url, settings.ratelimit_storage_uri) == ("inline", "local",
                                                                                             "memory://")


@pytest.mark.parametrize("name", UNITS)
def test_units_write_only_to_their_state_and_cache_dirs_and_need_no_env_file(name: str) -> None:
    text = (DEPLOY / name).read_text()
    assert "ProtectSystem=strict" in text and "ProtectHome=yes" in text
    assert "StateDirectory=tailboard" in text and "CacheDirectory=tailboard" in text
    assert f"Environment=TAILBOARD_DATA_DIR={STATE}" in text
    assert "Environment=TAILBOARD_CACHE_DIR=/var/cache/tailboard" in text
    assert "EnvironmentFile=-/etc/tailboard/env" in text  # optional: the embedded setup needs none
    assert text.index("Environment=TAILBOARD_DATA_DIR") < text.index("EnvironmentFile=")
    assert re.search(r"^User=tailboard$", text, re.MULTILINE)


def test_env_example_and_units_agree_on_the_data_dir() -> None:
    assert active_settings((DEPLOY / "env.example").read_text())["TAILBOARD_DATA_DIR"] == STATE


def test_the_readme_creates_the_service_user_before_anything_runs_as_it() -> None:
    text = (DEPLOY / "README.md").read_text()
    useradd = text.index("useradd --system")
    assert "tailboard" in text[useradd:text.index("\n", useradd)]
    assert useradd < text.index("systemctl daemon-reload")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None, reason="runuser needs root")
def test_tailboard_flask_runs_with_the_unit_defaults_overridden_by_the_env_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env_file = tmp_path / "env"
    env_file.write_text(f"# like /etc/tailboard/env\nTAILBOARD_DATA_DIR={data}\n#DATABASE_URL=postgresql://nope\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILBOARD_") and k != "DATABASE_URL"}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    subprocess.run([str(Path(sys.executable).parent / "alembic"), "upgrade", "head"], cwd=PROJECT_ROOT, check=True,
                   env={**env, "TAILBOARD_DATA_DIR": str(data)}, capture_output=True)
    done = subprocess.run([str(DEPLOY / "tailboard-flask"), "users", "create", "first@example.org", "--password",
                           "long enough", "--organizer"], capture_output=True, text=True, check=False, timeout=120,
                          env={**env, "TAILBOARD_SERVICE_USER": "root", "TAILBOARD_ENV_FILE": str(env_file),
                               "TAILBOARD_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "1"
    assert (data / "tailboard.sqlite3").exists()
