"""Errors that say what happened (docs/RUNNING.md#errors): outages are 503 with Retry-After, never 500.

The object store failing during an upload (a real S3 client whose server is away), the
database locked past its busy timeout (SQLite) or its connections killed (PostgreSQL):
the answer says which part is away and when to try again, and nothing is charged.
"""

from __future__ import annotations

import io
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from api_helpers import add_user, configure, create_phase, predictions, upload
from ports import free_port
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY, s3_client
from sqlalchemy import create_engine, event, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from leaderboard import create_app
from leaderboard.models import QuotaUsage, Submission
from leaderboard.platform import db
from leaderboard.platform.db import make_engine
from leaderboard.platform.storage.s3 import S3Storage, client_config


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    """Run moto's S3 in a thread on loopback; yield its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    s3_client(endpoint).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


def counts(app) -> tuple[int, int]:
    """Return (submission rows, quota units used) of the instance."""
    runtime = app.extensions["tailboard"]
    with runtime.sessions() as session:
        rows = session.scalar(select(func.count()).select_from(Submission))
        used = session.scalar(select(func.coalesce(func.sum(QuotaUsage.used), 0)).where(QuotaUsage.day == "total"))
        return int(rows or 0), int(used or 0)


def sign_in(client, user_id: int) -> None:
    """Log the web client in as the user (a Flask-Login session)."""
    with client.session_transaction() as session:
        session["_user_id"], session["_fresh"], session["_session_version"] = str(user_id), True, 0


def test_an_object_store_outage_during_an_upload_is_a_503_with_retry_after_and_charges_nothing(
        tmp_path: Path, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                        "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_MAX_ATTEMPTS": "1"}.items():
        monkeypatch.setenv(name, value)
    app = configure(create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True,
                                "storage_url": f"s3://{BUCKET}/outage", "storage_timeout_seconds": 1.0}))
    client = app.test_client()
    organizer, alice = add_user(app, "org@example.org", "Org", organizer=True), add_user(app, "a@example.org", "Alice")
    phase_id = create_phase(client, organizer)
    assert upload(client, alice, phase_id, predictions()).status_code == 202  # the store works
    runtime = app.extensions["tailboard"]
    down = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{free_port()}", config=client_config(1.0))
    monkeypatch.setattr(runtime, "storage", S3Storage(down, BUCKET, "outage/files"))  # its server is gone
    before = counts(app)
    response = upload(client, alice, phase_id, predictions(), key="during-the-outage")
    assert response.status_code == 503, response.get_data(as_text=True)
    assert int(response.headers["Retry-After"]) > 0
    body = response.get_json()
    assert body["details"]["unavailable"] == "storage" and "nothing was charged" in body["error"]
    assert counts(app) == before
    sign_in(client, alice.user_id)
    app.config["WTF_CSRF_ENABLED"] = False
    page = client.post(f"/phases/{phase_id}", data={"file": (io.BytesIO(predictions()), "p.csv")})
    assert page.status_code == 503 and "Retry-After" in page.headers
    assert "nothing was charged" in page.get_data(as_text=True)
    assert counts(app) == before


def test_sqlite_locked_past_its_busy_timeout_is_a_503_and_the_retry_is_charged_once(tmp_path: Path) -> None:
    app = configure(create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True}))
    client = app.test_client()
    organizer, alice = add_user(app, "org@example.org", "Org", organizer=True), add_user(app, "a@example.org", "Alice")
    phase_id = create_phase(client, organizer)
    engine = app.extensions["tailboard"].engine
    event.listen(engine, "connect", lambda connection, _record: connection.execute("PRAGMA busy_timeout = 200"))
    engine.dispose()  # new connections wait 200 ms for a lock, not 30 s
    holder = sqlite3.connect(make_url(str(engine.url)).database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        response = upload(client, alice, phase_id, predictions(), key="while-locked")
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.headers["Retry-After"] == "5" and response.get_json()["details"]["unavailable"] == "database"
        assert client.get(f"/api/v1/phases/{phase_id}").status_code == 200  # WAL: readers go on
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    again = upload(client, alice, phase_id, predictions(), key="while-locked")
    assert again.status_code == 202
    assert counts(app)[1] == 1


@pytest.mark.postgres
def test_postgresql_connections_killed_between_requests_are_replaced_not_answered_500(
        tmp_path: Path, throwaway_postgres_url: str) -> None:
    app = configure(create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True,
                                "database_url": throwaway_postgres_url}))
    client = app.test_client()
    organizer = add_user(app, "org@example.org", "Org", organizer=True)
    phase_id = create_phase(client, organizer)
    assert client.get(f"/api/v1/phases/{phase_id}").status_code == 200  # the pool holds a connection now
    side = create_engine(make_url(throwaway_postgres_url).set(drivername="postgresql+psycopg"),
                         isolation_level="AUTOCOMMIT", poolclass=NullPool)
    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with side.connect() as connection:
        killed = connection.execute(text(f"SELECT count(pg_terminate_backend(pid)) {others}")).scalar()
        deadline = time.monotonic() + 30
        while connection.execute(text(f"SELECT count(*) {others}")).scalar() and time.monotonic() < deadline:
            time.sleep(0.05)  # pg_terminate_backend only signals: wait until the killed backends are gone
    side.dispose()
    assert killed >= 1
    assert client.get(f"/api/v1/phases/{phase_id}").status_code == 200  # checked on checkout, replaced


def _end_backend(url: str, pid: int) -> None:
    """Terminate one server backend from a side connection and wait until it is gone."""
    side = create_engine(make_url(url).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT",
                         poolclass=NullPool)
    with side.connect() as connection:
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        deadline = time.monotonic() + 30
        while connection.execute(text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"),
                                 {"pid": pid}).scalar() and time.monotonic() < deadline:
            time.sleep(0.05)
    side.dispose()


def _backend_pid(engine) -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar())


@pytest.mark.postgres
def test_a_pooled_connection_the_server_ended_is_replaced_at_checkout_without_a_ping(
        throwaway_postgres_url: str) -> None:
    engine = make_engine(throwaway_postgres_url)
    first = _backend_pid(engine)
    assert _backend_pid(engine) == first  # hot and alive: handed out again
    _end_backend(throwaway_postgres_url, first)
    assert _backend_pid(engine) != first  # its socket told: replaced, no error
    engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("ping_after", [0.0, 3600.0])
def test_a_connection_idle_past_the_ping_age_is_pinged_so_a_silent_death_is_replaced(
        throwaway_postgres_url: str, monkeypatch: pytest.MonkeyPatch, ping_after: float) -> None:
    monkeypatch.setattr(db, "_has_unread", lambda fileno: False)  # a server gone without a word
    monkeypatch.setattr(db, "PING_AFTER_SECONDS", ping_after)
    engine = make_engine(throwaway_postgres_url)
    first = _backend_pid(engine)
    _end_backend(throwaway_postgres_url, first)
    if ping_after == 0.0:  # idle long enough: pinged, the dead one dropped, a new one handed out
        assert _backend_pid(engine) != first
    else:  # the twin: not pinged, so the dead connection is used and the statement fails
        with pytest.raises(OperationalError):
            _backend_pid(engine)
    engine.dispose()


@pytest.mark.postgres
def test_a_pinged_connection_is_left_out_of_any_transaction_so_an_autocommit_read_can_take_it(
        throwaway_postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "PING_AFTER_SECONDS", 0.0)  # every checkout pings, as after 10 s idle
    engine = make_engine(throwaway_postgres_url)
    first = _backend_pid(engine)
    autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")  # as the board cache's state reads
    with autocommit.connect() as connection:  # a ping that left a transaction open failed here
        assert connection.execute(text("SELECT pg_backend_pid()")).scalar() == first
    assert _backend_pid(engine) == first
    engine.dispose()


@pytest.mark.postgres
def test_postgresql_away_is_a_503_with_retry_after(tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    app = create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True,
                      "database_url": url})
    response = app.test_client().get("/api/v1/competitions")
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert response.get_json()["details"]["unavailable"] == "database"


LONE_SURROGATE_JSONL = b'{"id": "q0", "prediction": "yes"}\n{"id": "q1", "prediction": "\\ud800"}\n'


def test_a_lone_surrogate_escape_is_a_line_numbered_400_from_the_api_and_the_form(app, client, users):
    phase_id = create_phase(client, users["organizer"])
    response = upload(client, users["alice"], phase_id, LONE_SURROGATE_JSONL, filename="p.jsonl")
    assert response.status_code == 400
    errors = response.get_json()["details"]["errors"]
    assert errors[0]["line"] == 2 and "surrogate" in errors[0]["message"]
    sign_in(client, users["alice"].user_id)
    app.config["WTF_CSRF_ENABLED"] = False
    page = client.post(f"/phases/{phase_id}", data={"file": (io.BytesIO(LONE_SURROGATE_JSONL), "p.jsonl")})
    text_ = page.get_data(as_text=True)
    assert page.status_code == 400 and "surrogate" in text_ and "Traceback" not in text_


def test_a_lone_surrogate_escape_is_a_clear_error_from_scoring_validate(tmp_path: Path) -> None:
    import subprocess
    import sys

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "q0", "label": true}\n{"id": "q1", "label": false}\n')
    for name, content in (("p.jsonl", LONE_SURROGATE_JSONL),
                          ("p.json", b'[{"id": "q0", "prediction": "yes"}, {"id": "q1", "prediction": "\\udc00"}]')):
        path = tmp_path / name
        path.write_bytes(content)
        result = subprocess.run([sys.executable, "-m", "scoring", "validate", "--labels", str(labels),
                                 "--predictions", str(path)], capture_output=True, text=True, timeout=120)
        assert result.returncode != 0 and "Traceback" not in result.stdout + result.stderr
        assert "lone surrogate" in result.stdout + result.stderr
