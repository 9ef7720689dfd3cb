"""PostgreSQL connections killed every 0.3 s while participants upload to a real gunicorn.

A side connection runs ``pg_terminate_backend`` on every other connection of the
instance's database, over and over, while each participant keeps uploading and retries
an upload that got no answer with the same Idempotency-Key. Whatever the timing: a
quota unit is held only by a submission some client was answered 202 for, no 5xx
answer is empty and none is a 500 (a lost connection is a 503 with Retry-After),
every acknowledged submission ends scored (by the sweep), and the uploads stored but
never acknowledged are settled by the sweep without a charge. Every wait ends on an
event (uploads acknowledged, rounds of kills landed) under a generous ceiling, so a slow
machine only makes the test slower.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fault_support import (
    QUICK_RECOVERY,
    Answers,
    charged_ids,
    gunicorn,
    keep_uploading,
    make_instance,
    statuses,
    summary,
    wait_until,
)
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from leaderboard.models import Submission
from leaderboard.platform import Runtime
from leaderboard.submissions.claims import NOT_ACKNOWLEDGED

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults"), pytest.mark.postgres]
KILL_EVERY = 0.3
KILL_ROUNDS = 40
"""Rounds of killing (one every KILL_EVERY seconds, however slowly they come) before the killing stops."""
CEILING = 180.0
"""The longest any one wait may take on a slow, loaded machine (a wait ends as soon as its event happened)."""


def kill_connections(database_url: str, stop: threading.Event, killed: list[int]) -> None:
    """Terminate every other backend of the database every KILL_EVERY seconds until stop; append each round's count."""
    url = make_url(database_url).set(drivername="postgresql+psycopg")
    engine = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with engine.connect() as side:
        while not stop.wait(KILL_EVERY):
            killed.append(len(side.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()")).all()))
    engine.dispose()


def unacknowledged(runtime: Runtime, phase_id: int, *, settled: bool = False) -> int:
    """Return how many uploads of the phase are stored but not acknowledged: still waiting, or settled."""
    status = Submission.failure_detail == NOT_ACKNOWLEDGED if settled else Submission.status == "received"
    with runtime.sessions() as session:
        return int(session.scalar(select(func.count()).select_from(Submission)
                                  .where(Submission.phase_id == phase_id, status)) or 0)


def test_no_quota_is_charged_without_a_202_while_connections_are_killed(tmp_path: Path,
                                                                          throwaway_postgres_url: str) -> None:
    env = {
        **QUICK_RECOVERY,
        "DATABASE_URL": throwaway_postgres_url,
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_STORAGE": "local",
        "TAILBOARD_SCORING": "inline",
    }
    instance = make_instance(env, participants=4)
    server = gunicorn(env, tmp_path / "gunicorn.log").start()
    answers, stop_clients, stop_killing = Answers(), threading.Event(), threading.Event()
    runtime = instance.runtime()
    killed: list[int] = []
    killer = threading.Thread(target=kill_connections, args=(throwaway_postgres_url, stop_killing, killed))
    try:
        clients = keep_uploading(f"http://127.0.0.1:{server.port}", instance, answers, stop_clients)
        assert wait_until(lambda: answers.count()[0] >= 3, seconds=CEILING), (answers.statuses, server.log_tail())
        killer.start()
        # Kill until the kills have landed: KILL_ROUNDS rounds, connections killed, and failed answers seen.
        start_failed = answers.count()[1]
        landed = wait_until(lambda: len(killed) >= KILL_ROUNDS and sum(killed) > 0
                            and answers.count()[1] > start_failed, seconds=CEILING)
        stop_killing.set()
        killer.join(timeout=30)
        assert landed and sum(killed) > 0, (sum(killed), answers.statuses)
        after = answers.count()[0]
        assert wait_until(lambda: answers.count()[0] >= after + 3, seconds=CEILING), "no upload acknowledged after"
        stop_clients.set()
        for client in clients:
            client.join(timeout=60)
        assert answers.empty_errors == [], answers.empty_errors
        assert 500 not in answers.statuses, answers.statuses  # a lost connection is a 503 with Retry-After
        charged, used = charged_ids(runtime, instance.phase_id)
        assert charged - answers.acknowledged == set(), "charged without a 202"
        assert charged == answers.acknowledged and used == len(charged)
        acknowledged = answers.acknowledged
        scored = wait_until(lambda: set(statuses(runtime, acknowledged).values()) == {"scored"}, seconds=CEILING)
        left = {i: s for i, s in statuses(runtime, acknowledged).items() if s != "scored"}
        assert scored and not left, f"acknowledged but not scored: {left}\n{server.log_tail()}"
        # Uploads stored but never acknowledged are settled by the sweep, and never charged.
        assert wait_until(lambda: unacknowledged(runtime, instance.phase_id) == 0, seconds=CEILING)
        assert charged_ids(runtime, instance.phase_id) == (charged, used)
        print(summary(runtime, answers), f"; connections killed {sum(killed)}; never acknowledged, settled "
              f"uncharged {unacknowledged(runtime, instance.phase_id, settled=True)}")
    finally:
        stop_killing.set()
        stop_clients.set()
        server.stop()
        runtime.engine.dispose()
