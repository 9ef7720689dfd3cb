"""The Celery app of the scale-out deployment: ``celery -A leaderboard.tasks worker``.

The web process sends ``tailboard.score_submission`` by name (services.dispatch);
this module is imported only by workers. A submission is committed as queued before
it is sent, the task is acknowledged only after it ran (``task_acks_late``), and a
worker killed mid-task gives the message back to the broker
(``task_reject_on_worker_lost``): a crash leaves the submission queued, never lost.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from sqlalchemy.exc import OperationalError

from leaderboard.config import Settings
from leaderboard.runtime import Runtime, build_runtime
from leaderboard.services.dispatch import SCORE_TASK
from leaderboard.services.scoring_runs import score_submission

app = Celery("tailboard")
# A promise: settings are read when the worker first needs its config, not at import.
app.add_defaults(lambda: celery_config(Settings.from_env()))

_runtimes: dict[int, Runtime] = {}


def celery_config(settings: Settings) -> dict[str, Any]:
    """Return the Celery settings of a Tailboard worker."""
    if not settings.celery_broker_url:
        raise RuntimeError("the Celery worker needs CELERY_BROKER_URL, e.g. redis://127.0.0.1:6379/0")
    return {
        "broker_url": settings.celery_broker_url,
        "broker_connection_retry_on_startup": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "worker_hijack_root_logger": False,
    }


def worker_runtime() -> Runtime:
    """Return this process's runtime, built on first use (after the pool forked)."""
    pid = os.getpid()
    if pid not in _runtimes:
        _runtimes.clear()  # an inherited parent runtime must not share connections
        _runtimes[pid] = build_runtime(Settings.from_env())
    return _runtimes[pid]


@app.task(
    name=SCORE_TASK,
    autoretry_for=(OperationalError,),  # the database is briefly away: try again later
    retry_backoff=True,
    max_retries=8,
)
def score_submission_task(submission_id: int) -> None:
    """Score one submission in a fresh session of this worker's runtime."""
    runtime = worker_runtime()
    with runtime.sessions() as session:
        score_submission(runtime.context(session), submission_id=submission_id)
