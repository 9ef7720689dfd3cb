"""Scaled-out scoring: the web side queues on Redis, a real ``celery -A leaderboard.workers.celery_app worker`` scores.

Uses the Redis server at 127.0.0.1:6379 (database 13, so other users of that server
are not disturbed) and, for the PostgreSQL run, the server at 127.0.0.1:5432.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic_support import alembic_config
from reachability import unreachable

from leaderboard.accounts import OPERATOR
from leaderboard.board import board_changed
from leaderboard.models import Score, Submission
from leaderboard.platform import Runtime, Settings, build_runtime
from leaderboard.platform.runtime import SCORE_TASK, CeleryDispatcher
from leaderboard.submissions import score_submission

PROJECT_ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = "redis://127.0.0.1:6379/13"

# One xdist process runs every test here: two workers on one queue would steal each other's tasks.
pytestmark = [pytest.mark.xdist_group("celery_worker"), pytest.mark.slow]

LABELS = b"".join(
    json.dumps({"id": f"q{i}", "label": i % 2 == 0, "category": "a" if i < 4 else "b"}).encode() + b"\n"
    for i in range(8)
)
# Six of eight right: q0 and q1 are answered wrongly.
PREDICTIONS = b"id,prediction\n" + b"".join(
    f"q{i},{'yes' if (i % 2 == 0) != (i < 2) else 'no'}\n".encode() for i in range(8)
)


@pytest.fixture(scope="module")
def redis_url() -> str:
    """Return the URL of a Redis database for the broker, skipping when Redis is down."""
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
    except redis.RedisError as error:
        unreachable(f"Redis is not reachable at 127.0.0.1:6379: {error}")
    return REDIS_URL


@pytest.fixture
def instance_env(empty_database_url: str, redis_url: str, tmp_path: Path) -> dict[str, str]:
    """Return the environment of a migrated instance that scores with Celery."""
    database_url = empty_database_url
    command.upgrade(alembic_config(database_url), "head")
    return {
        "DATABASE_URL": database_url,
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_LABELS_DIR": str(tmp_path / "hidden_labels"),
        "TAILBOARD_STORAGE": "local",
        "TAILBOARD_SCORING": "celery",
        "CELERY_BROKER_URL": redis_url,
        "SECRET_KEY": "celery-worker-test",
    }


@pytest.fixture
def web_runtime(instance_env: dict[str, str]) -> Iterator[Runtime]:
    """Return the runtime the web process would build from that environment."""
    runtime = build_runtime(Settings.from_env(instance_env), score=score_submission, board_changed=board_changed)
    yield runtime
    runtime.engine.dispose()


class Worker:
    """A ``celery -A leaderboard.workers.celery_app worker`` subprocess with its log in a file."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self.log = log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "leaderboard.workers.celery_app", "worker", "--loglevel=INFO",
             "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--hostname", f"tailboard-test-{uuid.uuid4().hex[:8]}@%h",
             # with its beat, as deployed (deploy/tailboard-beat.service): the sweep re-sends what is
             # still queued after TAILBOARD_STALE_SECONDS
             "--beat", "--schedule", str(log_path.with_suffix(".beat"))],
            cwd=PROJECT_ROOT, env={**os.environ, **env, "TAILBOARD_SWEEP_SECONDS": "5",
                                                 "TAILBOARD_STALE_SECONDS": "10"}, stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def log_tail(self) -> str:
        """Return the end of the worker's log, for failure messages."""
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Ask for a warm shutdown; kill the worker if it does not stop."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def start_worker(instance_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], Worker]]:
    """Return a function that starts the worker; every started worker is stopped after."""
    workers: list[Worker] = []

    def start() -> Worker:
        workers.append(Worker(instance_env, tmp_path / f"worker-{len(workers)}.log"))
        return workers[-1]

    yield start
    for worker in workers:
        worker.stop()


def wait_until_finished(runtime: Runtime, submission_id: int, worker: Worker) -> Submission:
    """Poll the database until the worker scored (or failed) the submission."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with runtime.sessions() as session:
            submission = session.get(Submission, submission_id)
            if submission is not None and submission.status in ("scored", "failed"):
                return submission
        if worker.process.poll() is not None:
            pytest.fail(f"the worker exited with {worker.process.returncode}:\n{worker.log_tail()}")
        time.sleep(0.2)
    pytest.fail(f"submission {submission_id} was not scored within 120 s (broker: {broker_state()}):\n"
                f"{worker.log_tail()}")


def broker_state() -> dict[str, int]:
    """Return how many messages wait in the queue and how many a worker holds unacknowledged (for failures)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    return {"queued": int(client.llen("celery")), "unacked": int(client.hlen("unacked"))}


def queue_a_submission(runtime: Runtime) -> int:
    """Create a phase and accept one upload with the Celery dispatcher; return its id."""
    from leaderboard import accounts, submissions
    from leaderboard.organizing import competitions, phases

    with runtime.sessions() as session:
        ctx = runtime.context(session)
        organizer = accounts.register_user(ctx, email="org@example.org", password="organizer-pass", is_organizer=True)
        competitions.create_competition(ctx, slug="celery-test", title="Celery test", actor=organizer)
        phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug="celery-test", name="Dev", labels=LABELS,
                                    config={"task_type": "binary", "primary_metric": "accuracy"})
        phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
        user = accounts.register_user(ctx, email="ada@example.org", password="participant-pass")
        submission = submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="preds.csv",
                                                   stream=io.BytesIO(PREDICTIONS))
        return submission.id


def test_a_submission_queued_while_no_worker_runs_is_scored_when_one_starts(
    web_runtime: Runtime, start_worker: Callable[[], Worker]
) -> None:
    assert isinstance(web_runtime.dispatcher, CeleryDispatcher)
    submission_id = queue_a_submission(web_runtime)
    with web_runtime.sessions() as session:
        assert session.get(Submission, submission_id).status == "queued"  # nobody has scored it yet
    worker = start_worker()
    submission = wait_until_finished(web_runtime, submission_id, worker)
    assert submission.status == "scored", submission.failure_detail
    with web_runtime.sessions() as session:
        scores = session.query(Score).filter_by(submission_id=submission_id, retired_at=None).all()
    assert len(scores) == 1
    assert scores[0].public_primary == pytest.approx(6 / 8)


def test_the_worker_acknowledges_late_and_requeues_on_a_lost_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    from leaderboard.workers.celery_app import celery_config, score_submission_task

    monkeypatch.setenv("CELERY_BROKER_URL", REDIS_URL)  # the app reads its config on first use
    config = celery_config(Settings.from_env({"CELERY_BROKER_URL": REDIS_URL, "SECRET_KEY": "x"}))
    assert config["broker_url"] == REDIS_URL
    assert config["task_acks_late"] is True
    assert config["task_reject_on_worker_lost"] is True
    assert config["worker_prefetch_multiplier"] == 1
    assert score_submission_task.name == SCORE_TASK  # the name CeleryDispatcher sends


def test_the_worker_refuses_to_start_without_a_broker_url() -> None:
    from leaderboard.workers.celery_app import celery_config

    with pytest.raises(RuntimeError, match="CELERY_BROKER_URL"):
        celery_config(Settings.from_env({"SECRET_KEY": "x"}))
