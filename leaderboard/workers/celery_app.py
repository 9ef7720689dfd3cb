"""The Celery app of the scale-out deployment: ``celery -A leaderboard.workers.celery_app worker`` and ``... beat``.

The web process sends ``tailboard.score_submission`` by name (leaderboard/platform/runtime.py's CeleryDispatcher);
this module is imported only by workers and beat. The task is a wake-up: the worker scores
the fairest queued submission (submissions/queue.py), not necessarily the one it names,
so one owner's flood never holds back another's upload. A submission is committed as queued
before it is sent, the task is acknowledged only after it ran (``task_acks_late``), and
a worker process killed mid-task gives the message back (``task_reject_on_worker_lost``).
A whole worker killed leaves its message unacknowledged in Redis until the visibility
timeout (stale_seconds, not Redis's default hour) and its submission ``scoring``: beat
runs ``tailboard.sweep`` every sweep_seconds, which takes such a submission back once its
lease lapsed (lease_seconds without renewal: platform/leases.py) and wakes a scorer for
it again (submissions/recovery.py).
Nobody has to run ``flask requeue``. With mail on, beat also runs ``tailboard.send_mail``
every mail_seconds: the outbox's due mails (notify/outbox.py) go out from a worker.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from sqlalchemy.exc import OperationalError

from leaderboard.board import CELLS_AHEAD, board_changed
from leaderboard.notify import deliver_due, mail_enabled, webhooks
from leaderboard.operations import resumable_ids, run_job
from leaderboard.platform import Runtime, Settings, build_runtime
from leaderboard.platform.runtime import JOB_TASK, MAIL_TASK, SCORE_TASK, SWEEP_TASK
from leaderboard.platform.smtp import SmtpTransport, parse_smtp_url
from leaderboard.submissions import wake_scorer
from leaderboard.submissions.recovery import sweep
from leaderboard.workers.webhook_sender import TASK as WEBHOOK_TASK

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
        # Unacknowledged messages come back after this long, not Redis's default hour; a
        # message given back while its run still goes on finds the row claimed and stops.
        "broker_transport_options": {"visibility_timeout": max(60, int(settings.stale_seconds))},
        "beat_schedule": _beat_schedule(settings),
    }


def _beat_schedule(settings: Settings) -> dict[str, Any]:
    """Return beat's schedule: the sweep every sweep_seconds, the outbox every mail_seconds (each off at 0)."""
    schedule: dict[str, Any] = {}
    # A run left waiting past the next one (workers busy or away) is dropped, not piled up.
    if settings.sweep_seconds > 0:
        schedule["sweep"] = {"task": SWEEP_TASK, "schedule": settings.sweep_seconds,
                             "options": {"expires": settings.sweep_seconds}}
    if mail_enabled(settings) and settings.mail_seconds > 0:
        schedule["mail"] = {"task": MAIL_TASK, "schedule": settings.mail_seconds,
                            "options": {"expires": settings.mail_seconds}}
    if settings.mail_seconds > 0:  # webhook deliveries (notify/webhooks.py), mail or no mail
        schedule["webhooks"] = {"task": WEBHOOK_TASK, "schedule": settings.mail_seconds,
                                "options": {"expires": settings.mail_seconds}}
    return schedule


def worker_runtime() -> Runtime:
    """Return this process's runtime, built on first use (after the pool forked)."""
    pid = os.getpid()
    if pid not in _runtimes:
        _runtimes.clear()  # an inherited parent runtime must not share connections
        _runtimes[pid] = build_runtime(Settings.from_env(), score=wake_scorer, board_changed=board_changed,
                                       run_job=run_job, board_cells=CELLS_AHEAD)
    return _runtimes[pid]


@app.task(
    name=SCORE_TASK,
    autoretry_for=(OperationalError,),  # the database is briefly away: try again later
    retry_backoff=True,
    max_retries=8,
)
def score_submission_task(submission_id: int) -> None:
    """Wake up: score the fairest queued submission (not necessarily this one) in a fresh session."""
    worker_runtime().score_now(submission_id)


@app.task(name=JOB_TASK, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=8)
def run_job_task(job_id: int) -> None:
    """Run one background job (re-scoring, label replacement) on this worker."""
    worker_runtime().run_job_now(job_id)


@app.task(name=SWEEP_TASK)
def sweep_task() -> int:
    """Dispatch again what is due or abandoned (submissions, then jobs); return how many submissions."""
    runtime = worker_runtime()
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        dispatched = sweep(ctx)
        for job_id in resumable_ids(ctx):
            ctx.dispatch_job(job_id)
        return len(dispatched)


@app.task(name=MAIL_TASK)
def send_mail_task() -> int:
    """Send the outbox's due mails over SMTP; return how many were sent."""
    runtime = worker_runtime()
    transport = SmtpTransport(parse_smtp_url(runtime.settings.smtp_url or ""))
    with runtime.sessions() as session:
        return deliver_due(runtime.context(session), transport=transport)


@app.task(name=WEBHOOK_TASK)
def send_webhooks_task() -> int:
    """Post the due webhook deliveries (notify/webhooks.py); return how many a receiver took."""
    runtime = worker_runtime()
    with runtime.sessions() as session:
        return webhooks.deliver_due(runtime.context(session))
