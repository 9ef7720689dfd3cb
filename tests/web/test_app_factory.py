"""The app factory: settings overrides and the reverse-proxy setting."""

from __future__ import annotations

from pathlib import Path

from flask import request

from leaderboard import create_app


def _remote_addr_app(tmp_path: Path, proxies: int):  # type: ignore[no-untyped-def]
    app = create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "trusted_proxies": proxies})
    app.add_url_rule("/_addr", "addr", lambda: request.remote_addr or "")
    return app


def test_forwarded_for_is_ignored_without_trusted_proxies(tmp_path: Path) -> None:
    app = _remote_addr_app(tmp_path, 0)
    response = app.test_client().get("/_addr", headers={"X-Forwarded-For": "203.0.113.9"})
    assert response.get_data(as_text=True) == "127.0.0.1"


def test_forwarded_for_names_the_client_behind_one_trusted_proxy(tmp_path: Path) -> None:
    app = _remote_addr_app(tmp_path, 1)
    response = app.test_client().get("/_addr", headers={"X-Forwarded-For": "203.0.113.9"})
    assert response.get_data(as_text=True) == "203.0.113.9"


def test_default_sqlite_database_works_with_a_given_secret_key(tmp_path: Path) -> None:
    from sqlalchemy import text

    from leaderboard.platform import Settings
    from leaderboard.platform.db import make_engine

    settings = Settings.from_env({"SECRET_KEY": "k", "TAILBOARD_DATA_DIR": str(tmp_path / "new" / "data")})
    with make_engine(settings.database_url).connect() as connection:
        assert connection.execute(text("select 1")).scalar() == 1
    assert (tmp_path / "new" / "data" / "tailboard.sqlite3").exists()


def test_method_not_allowed_is_json_on_the_api_and_keeps_allow(tmp_path: Path) -> None:
    app = create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels"})
    response = app.test_client().delete("/api/v1/competitions")
    assert response.status_code == 405
    assert response.get_json()["error"]
    assert "POST" in response.headers["Allow"]
