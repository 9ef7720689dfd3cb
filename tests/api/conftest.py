"""Fixtures of the API tests: an app with its own database, users with tokens, an open phase.

``live_server`` serves an app over real HTTP in a thread (threaded WSGI server), for
concurrency and the command-line client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import Caller, LiveServer, add_user, configure, create_phase
from flask import Flask
from flask.testing import FlaskClient

from leaderboard import create_app


@pytest.fixture
def app(tmp_path: Path) -> Flask:
    """Return an app with its own SQLite database, storage and label dirs."""
    return configure(create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True}))


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """Return a test client of app."""
    return app.test_client()


@pytest.fixture
def users(app: Flask) -> dict[str, Caller]:
    """Return the callers: anonymous, organizer, alice (participant) and bob (another participant)."""
    return {
        "anonymous": Caller("anonymous", None),
        "organizer": add_user(app, "org@example.org", "Organizer", organizer=True),
        "alice": add_user(app, "alice@example.org", "Alice"),
        "bob": add_user(app, "bob@example.org", "Bob"),
    }


@pytest.fixture
def phase_id(client: FlaskClient, users: dict[str, Caller]) -> int:
    """Return the id of an open phase with max_per_day=5."""
    return create_phase(client, users["organizer"])


@pytest.fixture
def live_server(app: Flask) -> Iterator[LiveServer]:
    """Serve app over HTTP for the duration of a test."""
    with LiveServer(app) as server:
        yield server


@pytest.fixture
def postgres_url(throwaway_postgres_url: str) -> str:
    """Return a throwaway PostgreSQL database (no schema yet)."""
    return throwaway_postgres_url
