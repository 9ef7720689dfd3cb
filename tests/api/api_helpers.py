"""Helpers of the API tests: label and prediction files, callers with tokens, a live server."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import dataclass
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from leaderboard.platform.db import Base

N_ITEMS = 20


def make_labels(n: int = N_ITEMS, *, private: bool = False) -> bytes:
    """Return a binary label file: even ids true; categories a/b; head/tail; every 4th item private."""
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"id": f"q{i}", "label": i % 2 == 0, "category": "a" if i < n // 2 else "b",
                               "popularity": "head" if i % 3 else "tail"}
        if private:
            row["split"] = "private" if i % 4 == 0 else "public"
        rows.append(json.dumps(row))
    return ("\n".join(rows) + "\n").encode()


def predictions(n: int = N_ITEMS, *, wrong: int = 0) -> bytes:
    """Return a valid CSV prediction file with the first `wrong` items answered wrongly."""
    lines = ["id,prediction"]
    for i in range(n):
        truth = i % 2 == 0
        lines.append(f"q{i},{'yes' if truth != (i < wrong) else 'no'}")
    return ("\n".join(lines) + "\n").encode()


def configure(app: Flask) -> Flask:
    """Create the schema and loosen the API rate limits (tests set their own where they test them)."""
    Base.metadata.create_all(app.extensions["tailboard"].engine)
    app.config.update(API_RATELIMIT="10000 per minute", API_INVALID_UPLOAD_RATELIMIT="1000 per minute")
    return app


@dataclass
class Caller:
    """A user with a token (token None: anonymous)."""

    name: str
    token: str | None
    user_id: int | None = None

    @property
    def headers(self) -> dict[str, str]:
        """Return the Authorization header of this caller (none for anonymous)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def add_user(app: Flask, email: str, name: str, *, organizer: bool = False) -> Caller:
    """Register a user with the services and give it a token."""
    from leaderboard import accounts

    runtime = app.extensions["tailboard"]
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        user = accounts.register_user(ctx, email=email, password="password123", display_name=name,
                                      is_organizer=organizer)
        _, token = accounts.create_token(ctx, user=user, name="tests")
        return Caller(name=name, token=token, user_id=user.id)


def create_phase(client: Any, organizer: Caller, *, slug: str = "demo", private: bool = False,
                 max_per_day: int | str | None = 5, open_it: bool = True, **form: Any) -> int:
    """Create a competition (if needed) and a phase through the API; return the phase id."""
    client.post("/api/v1/competitions", json={"slug": slug, "title": slug.title()}, headers=organizer.headers)
    data = {"name": "Phase", "labels": (io.BytesIO(make_labels(private=private)), "labels.jsonl"),
            "config": json.dumps({"task_type": "binary"}), **form}
    if max_per_day is not None:
        data["max_per_day"] = str(max_per_day)
    response = client.post(f"/api/v1/competitions/{slug}/phases", data=data, headers=organizer.headers)
    assert response.status_code == 201, response.get_json()
    phase_id = response.get_json()["id"]
    if open_it:
        assert client.post(f"/api/v1/phases/{phase_id}/open", headers=organizer.headers).status_code == 200
    return phase_id


def upload(client: FlaskClient, caller: Caller, phase_id: int, content: bytes, *, key: str | None = None,
           filename: str = "predictions.csv") -> Any:
    """POST a prediction file; closing the response runs scoring deferred past it (as a server does)."""
    headers = dict(caller.headers)
    if key is not None:
        headers["Idempotency-Key"] = key
    response = client.post(f"/api/v1/phases/{phase_id}/submissions",
                           data={"file": (io.BytesIO(content), filename)}, headers=headers)
    response.close()
    return response


class LiveServer:
    """An app served over HTTP on 127.0.0.1 by a threaded WSGI server in a daemon thread."""

    def __init__(self, app: Flask) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
