"""The fair queue with a real Celery worker (docs/RUNNING.md#the-scoring-queue), on Redis at 127.0.0.1:6379.

One owner floods the queue with 40 uploads (40 tasks in Redis, in that order); while the
first is being scored, another owner uploads one. Each task is only a wake-up: the worker
scores the fairest queued submission, so the single upload goes next, after at most the
one run that was under way (a FIFO worker would score all 40 first).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from fault_support import PREDICTIONS, celery_worker, make_instance, queue_uploads, statuses, wait_until
from sqlalchemy import select

from leaderboard.models import Submission, User

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]
FAULTS_DIR = Path(__file__).resolve().parent
FLOOD = 40


def test_a_celery_worker_scores_another_owners_single_upload_next_not_after_the_flood(tmp_path: Path,
                                                                                      redis_url: str) -> None:
    from leaderboard.submissions import accept_submission

    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'tailboard.sqlite3'}",
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_STORAGE": "local",
        "TAILBOARD_SCORING": "celery",
        "CELERY_BROKER_URL": redis_url,
        "SECRET_KEY": "fault-suite",
        "FAULT_SCORING_DELAY": "0.5",
        "PYTHONPATH": os.pathsep.join([str(FAULTS_DIR), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    instance = make_instance(env, participants=2)
    runtime = instance.runtime()
    worker = celery_worker("slow_tasks", env, tmp_path / "worker.log").start()
    try:
        flood = queue_uploads(runtime, instance, count=FLOOD)
        assert wait_until(lambda: "scoring" in statuses(runtime, flood).values(), seconds=120), worker.log_tail()
        with runtime.sessions() as session:
            other = session.scalar(select(User).where(User.email == "p1@example.org"))
            single = accept_submission(runtime.context(session), phase_id=instance.phase_id, user=other,
                                       filename="p.csv", stream=io.BytesIO(PREDICTIONS)).id
        started = {i for i, status in statuses(runtime, flood).items() if status != "queued"}
        assert wait_until(lambda: statuses(runtime, {single}) == {single: "scored"}, seconds=180), worker.log_tail()
        with runtime.sessions() as session:
            before = session.scalar(select(Submission.served_at).where(Submission.id == single))
            ahead = set(session.scalars(select(Submission.id).where(Submission.id.in_(flood),
                                                                    Submission.served_at < before)))
        # At most one slot: the runs already started, and one claimed as the single upload was committed.
        assert len(ahead) <= len(started) + 1 < FLOOD, (sorted(ahead), sorted(started))
        assert wait_until(lambda: set(statuses(runtime, flood).values()) == {"scored"}, seconds=180)
        print(f"the single upload was scored after {len(ahead)} of the flood's {FLOOD} runs")
    finally:
        worker.stop()
        runtime.engine.dispose()
