"""An S3 server frozen, killed and restarted while submissions are uploaded and scored.

Uploads and labels live on ``rclone serve s3`` over loopback. Embedded: a real gunicorn
(2 processes) scoring inline while participants keep uploading; the server is frozen
(SIGSTOP) and thawed, then killed (-9) and started again, each step taken once the
clients' answers show the previous one (uploads acknowledged, failures seen), never after
a fixed sleep. Scaled out: uploads
acknowledged while no worker runs, then a Celery worker scoring them while the server is
down, so every one fails on the platform's side first. Either way every upload answered
202 must end scored with nobody running ``flask requeue``: the sweep does it.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest
from fault_support import (
    QUICK_RECOVERY,
    Answers,
    Process,
    attempts,
    celery_beat,
    celery_worker,
    charged_ids,
    gunicorn,
    keep_uploading,
    make_instance,
    queue_uploads,
    statuses,
    summary,
    wait_until,
)
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]
CEILING = 180.0
"""The longest any one wait may take on a slow, loaded machine (a wait ends as soon as its event happened)."""


def progressed(answers: Answers, *, acknowledged: int = 0, failed: int = 0) -> None:
    """Wait until the clients got that many more 202s and failed answers (5xx or none) than now."""
    start = answers.count()
    reached = wait_until(lambda: answers.count()[0] >= start[0] + acknowledged
                         and answers.count()[1] >= start[1] + failed, seconds=CEILING)
    assert reached, (f"waited {CEILING:g} s for {acknowledged} more acknowledged and {failed} more failed answers",
                     answers.statuses)


def s3_env(tmp_path: Path, server: Process, monkeypatch: pytest.MonkeyPatch, **more: str) -> dict[str, str]:
    """Return an instance's environment on the S3 server (this process's boto3 gets the AWS_* part too)."""
    aws = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{server.port}",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_MAX_ATTEMPTS": "1",  # botocore does not retry on top of Tailboard's retries
    }
    for name, value in aws.items():
        monkeypatch.setenv(name, value)
    return {
        **QUICK_RECOVERY, **aws, **more,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'tailboard.sqlite3'}",
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_STORAGE": f"s3://{BUCKET}/instance",
        "TAILBOARD_STORAGE_TIMEOUT": "1.5",  # a frozen server fails a try within 1.5 s
    }


def test_every_acknowledged_upload_is_scored_after_an_s3_outage_without_a_human(
        tmp_path: Path, s3_server: Process, monkeypatch: pytest.MonkeyPatch) -> None:
    env = s3_env(tmp_path, s3_server, monkeypatch, TAILBOARD_SCORING="inline")
    instance = make_instance(env, participants=3)
    server = gunicorn(env, tmp_path / "gunicorn.log").start()
    answers, stop = Answers(), threading.Event()
    runtime = instance.runtime()
    try:
        clients = keep_uploading(f"http://127.0.0.1:{server.port}", instance, answers, stop)
        progressed(answers, acknowledged=3)  # uploads go through
        s3_server.signal(signal.SIGSTOP)  # frozen: connections open, nothing answers
        progressed(answers, failed=2)  # the outage reached the clients
        s3_server.signal(signal.SIGCONT)
        progressed(answers, acknowledged=3)  # thawed: uploads go through again
        s3_server.kill()  # gone: connections refused
        progressed(answers, failed=2)
        s3_server.start()
        progressed(answers, acknowledged=4)  # back
        stop.set()
        for client in clients:
            client.join(timeout=60)
        acknowledged = set(answers.acknowledged)
        assert len(acknowledged) >= 10, (answers.statuses, server.log_tail())
        assert 500 not in answers.statuses, answers.statuses  # the store away is a 503 with Retry-After
        scored = wait_until(lambda: set(statuses(runtime, acknowledged).values()) == {"scored"}, seconds=CEILING)
        left = {i: s for i, s in statuses(runtime, acknowledged).items() if s != "scored"}
        assert scored and not left, f"acknowledged but not scored: {left}\n{server.log_tail()}"
        charged, used = charged_ids(runtime, instance.phase_id)
        assert charged == acknowledged and used == len(acknowledged)
        assert answers.empty_errors == []
        print(summary(runtime, answers))
    finally:
        stop.set()
        server.stop()
        runtime.engine.dispose()


def test_uploads_scored_while_s3_is_down_fail_first_and_are_scored_when_it_returns(
        tmp_path: Path, s3_server: Process, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = s3_env(tmp_path, s3_server, monkeypatch, TAILBOARD_SCORING="celery", CELERY_BROKER_URL=redis_url)
    instance = make_instance(env, participants=1)
    runtime = instance.runtime()
    ids = queue_uploads(runtime, instance, count=5)  # acknowledged and sent; no worker runs yet
    beat = celery_beat(env, tmp_path)
    worker = celery_worker("leaderboard.workers.celery_app", env, tmp_path / "worker.log")
    try:
        s3_server.kill()
        beat.start()
        worker.start()
        failed_once = wait_until(lambda: min(attempts(runtime, ids).values()) >= 1, seconds=CEILING)
        assert failed_once, (attempts(runtime, ids), worker.log_tail())
        assert set(statuses(runtime, ids).values()) <= {"queued", "scoring"}  # retried, never failed
        s3_server.start()
        scored = wait_until(lambda: set(statuses(runtime, ids).values()) == {"scored"}, seconds=CEILING)
        assert scored, f"{statuses(runtime, ids)}\n{worker.log_tail()}"
        charged, used = charged_ids(runtime, instance.phase_id)
        assert charged == ids and used == len(ids)  # each kept its one charge through the retries
    finally:
        for process in (worker, beat):
            process.stop()
        runtime.engine.dispose()
