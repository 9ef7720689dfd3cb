"""Embedded mode's job worker: a daemon thread per serving process runs background jobs (docs/ORGANIZING.md).

In celery mode the Celery pool runs them (leaderboard.workers.celery_app) and this module stays idle.
The thread starts with the first request a process serves or the first job it is
handed, never in ``create_app``: ``flask --app app ...`` commands run their jobs in the
foreground, and a preloading master forks before any thread exists. Between jobs it
looks every few seconds for jobs nobody runs (queued ones whose dispatch was lost, and
running ones whose process died: operations/jobs.py), so a restarted instance resumes
them. Several processes looking at once is safe: each pick-up is a conditional UPDATE.
Off in tests (``testing``), where jobs run inline unless a test starts a worker.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any

from leaderboard.operations import jobs
from leaderboard.platform import Runtime
from leaderboard.workers.periodic import OncePerProcess

log = logging.getLogger(__name__)

POLL_SECONDS = 5.0
"""How often an idle worker looks for jobs nobody runs."""


class JobWorker:
    """One job-running daemon thread per process, started on demand; a JobDispatcher."""

    def __init__(self, runtime: Runtime, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.runtime = runtime
        self.poll_seconds = poll_seconds
        self._once = OncePerProcess()
        self._queue: queue.Queue[int] = queue.Queue()
        self._stop = threading.Event()

    def dispatch_job(self, job_id: int) -> None:
        """Hand a committed job to this process's worker thread (started if needed)."""
        self.start()
        self._queue.put(job_id)

    def start(self) -> None:
        """Start this process's worker thread unless it runs already."""
        self._once.run(self._start_thread)

    def _start_thread(self) -> None:
        self._queue, self._stop = queue.Queue(), threading.Event()
        threading.Thread(target=self._loop, args=(self._queue, self._stop), name="tailboard-jobs", daemon=True).start()

    def stop(self) -> None:
        """Ask the thread to stop after its current job."""
        self._stop.set()

    def run_one(self, job_id: int) -> None:
        """Run one job in a fresh session; a failure is logged, and the job is picked up again later."""
        try:
            self.runtime.run_job_now(job_id)
        except Exception:  # the database may be away: the job stays claimable and is resumed
            log.exception("running job %s failed; it is resumed later", job_id)

    def pending(self) -> list[int]:
        """Return the jobs nobody runs now (none when the database cannot be read)."""
        try:
            with self.runtime.sessions() as session:
                return jobs.resumable_ids(self.runtime.context(session))
        except Exception:  # the database is away: look again at the next poll
            log.exception("looking for unfinished jobs failed")
            return []

    def _loop(self, handed: queue.Queue[int], stop: threading.Event) -> None:
        for job_id in self.pending():
            handed.put(job_id)
        while not stop.is_set():
            try:
                job_id = handed.get(timeout=self.poll_seconds)
            except queue.Empty:
                for pending_id in self.pending():
                    handed.put(pending_id)
                continue
            self.run_one(job_id)


def init_app(app: Any, runtime: Runtime) -> None:
    """In embedded mode, run jobs on a worker thread of each serving process (not in tests)."""
    settings = runtime.settings
    if settings.scoring_mode != "inline" or settings.testing or runtime.run_job is None:
        return
    worker = JobWorker(runtime)
    runtime.job_dispatcher = worker
    app.extensions["tailboard_jobs"] = worker
    app.before_request(worker.start)
