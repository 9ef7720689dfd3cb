"""The wired parts of one instance (engine, storages, dispatcher, injected functions) and a per-call context.

Built once by whoever runs the instance: the app factory, the Celery worker, a test. The
builder hands ``build_runtime`` the function that scores one submission
(``submissions.scoring_runs.score_submission``), the one that brings a phase's board up to
date (``board.changes.board_changed``) and the job runner, so the runtime imports no
domain package. Domain code receives a ``ServiceContext`` (a session plus the runtime),
never imports Flask, hands committed submissions to ``ctx.dispatch`` and announces every
committed change that moves a board with ``ctx.board_changed``.

Dispatchers get a committed, queued submission scored: ``InlineDispatcher`` in this
process right away, ``CeleryDispatcher`` by sending the task by name to the broker (the
worker runs leaderboard/workers/celery_app.py). A dispatcher is called only after the submission is
committed as queued, so a lost dispatch (a crash, a broker outage) leaves it queued, and
the sweep wakes a scorer for it again once it has waited three leases (submissions/recovery.py).
A dispatch is a wake-up: the scorer takes the fairest queued submission (submissions/queue.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.platform.config import Settings
from leaderboard.platform.db import make_engine, make_sessionmaker
from leaderboard.platform.storage import make_storages
from leaderboard.platform.storage.base import Storage

log = logging.getLogger(__name__)

SCORE_TASK = "tailboard.score_submission"
"""Name of the Celery task that scores one submission (args: [submission_id])."""
SWEEP_TASK = "tailboard.sweep"
"""Name of the Celery task that runs recovery.sweep (scheduled by beat)."""
JOB_TASK = "tailboard.run_job"
"""Name of the Celery task that runs one background job (args: [job_id])."""
MAIL_TASK = "tailboard.send_mail"
"""Name of the Celery task that sends the mail outbox's due mails (scheduled by beat while mail is on)."""


class ScoreFunction(Protocol):
    """Score one queued submission in the given context (submissions.scoring_runs.score_submission)."""

    def __call__(self, ctx: ServiceContext, *, submission_id: int) -> None:
        """Score the submission."""
        ...


class BoardChangedFunction(Protocol):
    """Bring a phase's board up to date with what was just committed (board.changes.board_changed)."""

    def __call__(self, ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> None:
        """Announce the change and refresh the board."""
        ...


class CellsView(Protocol):
    """A board as it stands, computing a result's cells for it (board.cells.CellsView); picklable."""

    @property
    def signature(self) -> str:
        """Return the board signature the cells are computed for."""
        ...

    def cells(self, results: dict[str, Any]) -> list[Any]:
        """Return the result's cells on this board, as the refresh would compute them."""
        ...


class BoardCells(Protocol):
    """Board cells computed ahead of the refresh that needs them (board.cells.CELLS_AHEAD)."""

    def view(self, ctx: ServiceContext, phase: Any) -> CellsView:
        """Return the view of a phase's board as it stands now."""
        ...

    def keep(self, ctx: ServiceContext, *, submission_id: int, score_id: int, signature: str,
             cells: list[Any]) -> None:
        """Leave a score's cells, computed for a signature, for the refresh of this process that needs them."""
        ...


class Dispatcher(Protocol):
    """Something that gets a queued submission scored, now or soon."""

    def dispatch(self, submission_id: int) -> None:
        """Have the submission scored."""
        ...


class JobFunction(Protocol):
    """Run one background job in the given context (operations.job_runner.run_job)."""

    def __call__(self, ctx: ServiceContext, *, job_id: int) -> None:
        """Run the job."""
        ...


class JobDispatcher(Protocol):
    """Something that gets a queued job run: now, on a worker thread, or on the Celery pool."""

    def dispatch_job(self, job_id: int) -> None:
        """Have the job run."""
        ...


@dataclass
class Runtime:
    """Long-lived parts shared by every request or task of one process."""

    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    storage: Storage  # uploads and public data files
    labels: Storage  # hidden labels: never routed, never served
    score: ScoreFunction
    board_changed: BoardChangedFunction
    dispatcher: Dispatcher | None = None
    caches: dict[str, object] = field(default_factory=dict)
    run_job: JobFunction | None = None
    job_dispatcher: JobDispatcher | None = None
    board_cells: BoardCells | None = None  # a re-score's cells computed ahead; None: the refresh computes them

    def context(self, session: Session) -> ServiceContext:
        """Return a service context bound to session."""
        return ServiceContext(session=session, runtime=self)

    def score_now(self, submission_id: int) -> None:
        """Score one submission in a fresh session of this runtime (the inline dispatcher and the worker's task)."""
        with self.sessions() as session:
            self.score(self.context(session), submission_id=submission_id)

    def run_job_now(self, job_id: int) -> None:
        """Run one background job in a fresh session of this runtime (a worker thread, the Celery task, a test)."""
        if self.run_job is None:
            raise RuntimeError("this runtime was built without a job runner (build_runtime(..., run_job=...))")
        with self.sessions() as session:
            self.run_job(self.context(session), job_id=job_id)


@dataclass
class ServiceContext:
    """What a service call needs: the unit-of-work session and the runtime."""

    session: Session
    runtime: Runtime

    @property
    def settings(self) -> Settings:
        """Return the instance settings."""
        return self.runtime.settings

    @property
    def storage(self) -> Storage:
        """Return the storage of uploads and public files."""
        return self.runtime.storage

    @property
    def labels(self) -> Storage:
        """Return the storage of hidden labels."""
        return self.runtime.labels

    def dispatch(self, submission_ids: Iterable[int]) -> None:
        """Dispatch each committed submission; a failed dispatch is logged and left for the sweep."""
        dispatcher = self.runtime.dispatcher
        if dispatcher is None:
            log.warning("no dispatcher configured; submissions stay queued: %s", list(submission_ids))
            return
        for submission_id in submission_ids:
            try:
                dispatcher.dispatch(submission_id)
            except Exception:  # the row is committed as queued; the sweep dispatches it again
                log.exception("dispatching submission %s failed; it stays queued", submission_id)

    def board_changed(self, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> None:
        """Bring the phase's board up to date after a committed change that moves it (the runtime's hook).

        ``submission_ids``, when the change is only that these submissions were scored or
        re-scored, lets the refresh rebuild just their owners' entries; without it the whole
        board is rebuilt. When it returns, every reader sees the board with the change.
        """
        self.runtime.board_changed(self, phase_id=phase_id, submission_ids=submission_ids)

    def dispatch_job(self, job_id: int) -> None:
        """Hand a committed, queued job to the job dispatcher; a failure leaves it queued for the next pick-up."""
        dispatcher = self.runtime.job_dispatcher
        if dispatcher is None:
            log.warning("no job dispatcher configured; job %s stays queued", job_id)
            return
        try:
            dispatcher.dispatch_job(job_id)
        except Exception:  # the job is committed as queued; a worker's pick-up finds it
            log.exception("dispatching job %s failed; it stays queued", job_id)


class InlineDispatcher:
    """Score right away in this process, in a fresh session (the caller's has committed)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def dispatch(self, submission_id: int) -> None:
        """Score the submission before returning."""
        self.runtime.score_now(submission_id)


class CeleryDispatcher:
    """Send the scoring task by name to the broker; the worker runs leaderboard.workers.celery_app."""

    def __init__(self, celery_app: Any) -> None:
        self.celery_app = celery_app

    def dispatch(self, submission_id: int) -> None:
        """Queue the scoring task for the submission."""
        self.celery_app.send_task(SCORE_TASK, args=[submission_id])

    def dispatch_job(self, job_id: int) -> None:
        """Queue the task that runs a background job on the Celery pool."""
        self.celery_app.send_task(JOB_TASK, args=[job_id])


class InlineJobDispatcher:
    """Run a job right away in this process (the CLI's runtime, tests, benches without a worker thread)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def dispatch_job(self, job_id: int) -> None:
        """Run the job before returning."""
        self.runtime.run_job_now(job_id)


def make_dispatcher(runtime: Runtime) -> Dispatcher:
    """Return the dispatcher named by settings.scoring_mode ('inline' or 'celery')."""
    if runtime.settings.scoring_mode == "celery":
        # Imported here, not at the top: only a celery-mode process pays for importing Celery.
        from celery import Celery

        # A producer-only app: it connects on the first send, not here.
        return CeleryDispatcher(Celery("tailboard", broker=runtime.settings.celery_broker_url))
    return InlineDispatcher(runtime)


def make_job_dispatcher(runtime: Runtime) -> JobDispatcher:
    """Return the job dispatcher of the scoring mode: the Celery pool, else run in this process.

    A serving process in embedded mode replaces it with its worker thread (leaderboard/workers/job_worker.py).
    """
    dispatcher = runtime.dispatcher
    if isinstance(dispatcher, CeleryDispatcher):
        return dispatcher
    return InlineJobDispatcher(runtime)


def build_runtime(settings: Settings, *, score: ScoreFunction, board_changed: BoardChangedFunction,
                  run_job: JobFunction | None = None, board_cells: BoardCells | None = None) -> Runtime:
    """Create the engine, storages and dispatchers named by settings; the domain's functions are injected."""
    engine = make_engine(settings.database_url)
    storage, labels = make_storages(settings)
    runtime = Runtime(settings=settings, engine=engine, sessions=make_sessionmaker(engine), storage=storage,
                      labels=labels, score=score, board_changed=board_changed, run_job=run_job,
                      board_cells=board_cells)
    runtime.dispatcher = make_dispatcher(runtime)
    runtime.job_dispatcher = make_job_dispatcher(runtime) if run_job is not None else None
    return runtime
