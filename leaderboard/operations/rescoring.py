"""Re-score a phase as a background job, in batches, while its board stays readable.

Each submission ever scored (scored, or failed against a later label version) is scored
again against the phase's current labels. A batch is read and scored first (each file
read from storage once, scored in memory), then recorded in one transaction: the batch's
rows are set ``scored`` by one conditional UPDATE (rows no longer scored or failed are
left alone), their active scores retired and the new ones inserted together, with their
notices; the old scores stay active until that commit, so no reader ever sees a
submission without a score. If the labels were replaced meanwhile the whole batch is
dropped (the newer job scores it). A file no longer valid against the labels fails its
submission alone (retired score, refund, mail), in a transaction of its own.

Progress and the resume point (the last submission id done) are committed after every
batch; a run killed mid-batch resumes after the last committed batch and scores that
batch once more (a retired row more, the same numbers). A thread of the run tells the
board what changed at most every ``BOARD_EVERY_SECONDS`` and once at the end, naming the
re-scored submissions, so each refresh rebuilds only their owners' entries
(board/refresh.py) while the job goes on; a resumed run, which cannot know what its
predecessor left untold, asks for a whole rebuild once. Submissions queued or being
scored meanwhile are left to their own run, which reads the current labels too.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Select, Text, cast, func, select, update

from leaderboard.entries import quota
from leaderboard.models import Job, Phase, Score, Submission
from leaderboard.notify import events as notices
from leaderboard.operations import jobs, rescore_pool
from leaderboard.operations.rescore_pool import FileToScore, Invalid, Pending, Rescored, Scorer
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.sessions import quick_retries
from leaderboard.submissions import claim
from leaderboard.submissions.scoring_runs import primary_values

log = logging.getLogger(__name__)

BATCH = 100
"""Submissions scored and recorded together; progress and the resume point are committed after each batch."""
BATCH_BYTES = 64 * 1024 * 1024
"""At most this many bytes of files in a batch (at least one file): a batch's files are held in memory."""
SCORED_AHEAD = 2
"""Batches handed to the scorer before the one being recorded (a pool scores them meanwhile)."""
BOARD_EVERY_SECONDS = 5.0
"""How often a running re-score tells the board what it changed (and once at the end); old scores show meanwhile."""
RESCORED = ("scored", "failed")


class BoardNotices:
    """What a run changed on the board, told by a thread of its own at most every BOARD_EVERY_SECONDS and at the end.

    The job's thread only adds the ids it recorded; the teller refreshes the board (in
    sessions of its own) while the job goes on recording, so a refresh never holds the
    job up. ``close`` tells what is left and waits: when the job ends, its board is up to
    date. A failure to tell is raised there (the job ends failed; readers refresh anyway).
    """

    def __init__(self, ctx: ServiceContext, *, phase_id: int, everything: bool) -> None:
        self.runtime, self.phase_id = ctx.runtime, phase_id
        self.changed = threading.Condition()
        self.pending: set[int] = set()
        self.everything = everything  # a resumed run: its predecessor may have left changes untold
        self.told_any = self.closing = False
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._tell_until_closed, name=f"rescore-board-{phase_id}", daemon=True)
        self.thread.start()

    def add(self, submission_ids: list[int]) -> None:
        """Remember submissions whose entries changed (told within BOARD_EVERY_SECONDS)."""
        with self.changed:
            self.pending.update(submission_ids)
            self.changed.notify()

    def close(self) -> None:
        """Tell the board what is left, wait until it is told, and raise what went wrong telling it, if anything."""
        with self.changed:
            self.closing = True
            self.changed.notify()
        self.thread.join()
        if self.error is not None:
            raise self.error

    def _tell_until_closed(self) -> None:
        """Tell the board what changed, at most every BOARD_EVERY_SECONDS, until closed (then once more)."""
        last = time.monotonic()
        while True:
            with self.changed:
                while not self.closing and not (self.pending and time.monotonic() - last >= BOARD_EVERY_SECONDS):
                    wait = BOARD_EVERY_SECONDS - (time.monotonic() - last) if self.pending else None
                    self.changed.wait(None if wait is None else max(wait, 0.01))
                ids, closing = sorted(self.pending), self.closing
                self.pending.clear()
            last = time.monotonic()
            try:
                self._tell(ids, final=closing)
            except Exception as error:  # kept for close(); the ids are announced with the next telling
                log.exception("telling the board of phase %s what a re-score changed failed", self.phase_id)
                self.error = error
                with self.changed:
                    self.pending.update(ids)
            if closing:
                return

    def _tell(self, ids: list[int], *, final: bool) -> None:
        """Tell the board: these submissions, or everything once after a resume (or at the end of an empty run)."""
        everything = self.everything or (final and not ids and not self.told_any)
        if not ids and not everything:
            return
        with self.runtime.sessions() as session:
            ctx = self.runtime.context(session)
            ctx.board_changed(phase_id=self.phase_id, submission_ids=None if everything else ids)
        self.everything, self.told_any, self.error = False, True, None


def eligible(phase_id: int, after: int = 0) -> Select[Any]:
    """Return the query of a phase's submissions a re-score covers (ever scored, not in flight), by id."""
    ever_scored = select(Score.submission_id)
    return (select(Submission.id)
            .where(Submission.phase_id == phase_id, Submission.id > after, Submission.status.in_(RESCORED),
                   Submission.id.in_(ever_scored))
            .order_by(Submission.id))


def count_eligible(ctx: ServiceContext, *, phase_id: int, after: int = 0) -> int:
    """Return how many submissions a re-score of the phase would cover (after the id ``after``)."""
    return int(ctx.session.scalar(select(func.count()).select_from(eligible(phase_id, after).subquery())) or 0)


def run_rescore(ctx: ServiceContext, *, job_id: int, token: str) -> None:
    """Re-score the job's phase batch by batch from its resume point; stop when the job is no longer ours.

    The next batches are read and handed to the scorer before the current one is recorded,
    so a pooled scorer (operations/rescore_pool.py) scores them while this thread records.
    """
    job = ctx.session.get(Job, job_id, populate_existing=True)
    assert job is not None and job.phase_id is not None
    phase_id, params, done = job.phase_id, dict(job.params), job.done
    resumed = "cursor" in params
    left = count_eligible(ctx, phase_id=phase_id, after=int(params.get("cursor", 0)))
    if not resumed:  # a first run counts what it will do (more may have been scored since queued)
        jobs.progress(ctx, job_id=job_id, token=token, done=0, total=left)
    board = BoardNotices(ctx, phase_id=phase_id, everything=resumed)
    scorers = Scorers(ctx, pooled=left >= rescore_pool.POOL_FROM)
    try:
        for batch in batches(ctx, scorers, phase_id=phase_id, after=int(params.get("cursor", 0))):
            board.add(finish_batch(ctx, batch, phase_id=phase_id))
            params["cursor"], done = batch.ids[-1], done + len(batch.ids)
            if not jobs.progress(ctx, job_id=job_id, token=token, done=done, params=params):
                log.info("job %s was taken over or superseded; this run stops", job_id)
                return
    finally:
        scorers.close()
        board.close()


def batches(ctx: ServiceContext, scorers: Scorers, *, phase_id: int, after: int) -> Iterator[Batch]:
    """Yield the run's batches in order, each handed to the scorer SCORED_AHEAD batches before its turn."""
    started: deque[Batch] = deque()
    more = True
    while True:
        while more and len(started) <= SCORED_AHEAD:
            batch = start_batch(ctx, scorers, phase_id=phase_id, after=started[-1].ids[-1] if started else after)
            more = batch is not None
            started.extend([batch] if batch is not None else [])
        if not started:
            return
        yield started.popleft()


@dataclass(frozen=True)
class Batch:
    """A batch being scored: every id it covers (the resume point moves past them), its label version, its outcomes."""

    ids: list[int]
    version: int
    outcomes: Pending


class Scorers:
    """The scorer of the phase's current label set (a new one if the labels change mid-run)."""

    def __init__(self, ctx: ServiceContext, *, pooled: bool) -> None:
        self.ctx, self.pooled = ctx, pooled
        self.current: Scorer | None = None

    def for_labels(self, phase: Phase) -> Scorer:
        """Return the scorer of the phase's current labels, loading them (and starting a pool) when they changed."""
        key = (phase.labels_sha256, json.dumps(phase.task_config, sort_keys=True))
        if self.current is None or self.current.key != key:
            self.close()
            board = self.ctx.runtime.board_cells
            self.current = Scorer(load_phase_labels(self.ctx, phase), key=key,
                                  max_bytes=self.ctx.settings.max_upload_bytes, pooled=self.pooled,
                                  board=None if board is None else board.view(self.ctx, phase))
        return self.current

    def close(self) -> None:
        """Stop the current scorer's pool, if any."""
        if self.current is not None:
            self.current.close()


def start_batch(ctx: ServiceContext, scorers: Scorers, *, phase_id: int, after: int) -> Batch | None:
    """Read the next batch's files after the id ``after`` and hand them to the scorer; None when none is left."""
    ids = _within_bytes(ctx.session.execute(eligible(phase_id, after).add_columns(Submission.file_size)
                                            .limit(BATCH)).all())
    if not ids:
        return None
    phase = ctx.session.get(Phase, phase_id, populate_existing=True)
    assert phase is not None
    scorer, version = scorers.for_labels(phase), phase.label_version
    rows = ctx.session.execute(select(Submission.id, Submission.status, Submission.file_key)
                               .where(Submission.id.in_(ids), Submission.status.in_(RESCORED))
                               .order_by(Submission.id)).all()
    earlier = _earlier_scores(ctx, [row[0] for row in rows])
    ctx.session.rollback()  # nothing is held while the files are read and scored
    files = [FileToScore(sid, status == "scored", quick_retries(
        partial(ctx.storage.read_bytes, key), session=ctx.session, what=f"reading the file of submission {sid}"),
        earlier.get(sid)) for sid, status, key in rows]
    return Batch(ids, version, scorer.submit(files))


def _earlier_scores(ctx: ServiceContext, ids: list[int]) -> dict[int, tuple[str, str]]:
    """Return {submission: (result, slice list)} of the active scores that have a slice list, as stored JSON text.

    The scoring process decodes them (rescore_pool): the job's thread, which records, does not.
    """
    rows = ctx.session.execute(select(Score.submission_id, cast(Score.results, Text), cast(Score.slice_tables, Text))
                               .where(Score.submission_id.in_(ids), Score.retired_at.is_(None),
                                      Score.slice_tables.is_not(None)))
    return {sid: (results, tables) for sid, results, tables in rows if results and tables}


def _within_bytes(rows: Sequence[Any]) -> list[int]:
    """Return the ids of (id, file size) rows up to BATCH_BYTES of files in all (at least one)."""
    ids: list[int] = []
    total = 0
    for sid, size in rows:
        total += int(size or 0)
        if ids and total > BATCH_BYTES:
            break
        ids.append(sid)
    return ids


def finish_batch(ctx: ServiceContext, batch: Batch, *, phase_id: int) -> list[int]:
    """Record a scored batch: invalid files failed one by one, the rest together; return the ids that changed."""
    outcomes = batch.outcomes()
    phase = ctx.session.get(Phase, phase_id, populate_existing=True)
    if phase is None:  # deleted with its submissions meanwhile
        return []
    changed = [o.submission_id for o in outcomes if isinstance(o, Invalid) and quick_retries(
        partial(_fail_invalid, ctx, o, version=batch.version), session=ctx.session,
        what=f"failing submission {o.submission_id}")]
    scored = [o for o in outcomes if isinstance(o, Rescored)]
    return changed + quick_retries(partial(record_batch, ctx, phase=phase, version=batch.version, scored=scored),
                                   session=ctx.session, what=f"recording {len(scored)} re-scored submissions")


def record_batch(ctx: ServiceContext, *, phase: Phase, version: int, scored: list[Rescored]) -> list[int]:
    """Make each new result its submission's one active score, in one transaction; return the ids recorded.

    Only rows still scored or failed are taken; nothing is recorded when the phase's labels
    changed since the batch was scored (the newer job scores it on them).
    """
    if not scored:
        return []
    taken = set(ctx.session.scalars(
        update(Submission).where(Submission.id.in_([s.submission_id for s in scored]),
                                 Submission.status.in_(RESCORED))
        .values(status="scored", failure_detail=None, next_attempt_at=None, scoring_started_at=None)
        .returning(Submission.id).execution_options(synchronize_session=False)))
    if ctx.session.scalar(select(Phase.label_version).where(Phase.id == phase.id)) != version:
        ctx.session.rollback()  # labels replaced meanwhile: the newer job scores the batch on them
        return []
    recorded = [s for s in scored if s.submission_id in taken]
    ids = [s.submission_id for s in recorded]
    ctx.session.execute(update(Score).where(Score.submission_id.in_(ids), Score.retired_at.is_(None))
                        .values(retired_at=utcnow()).execution_options(synchronize_session=False))
    scores = [_new_score(s, phase=phase, version=version) for s in recorded]
    ctx.session.add_all(scores)
    ctx.session.flush()
    ahead = [(s.submission_id, score.id, s.cells) for score, s in zip(scores, recorded, strict=True) if s.cells]
    # the webhooks, in this transaction (docs/NOTIFY.md); no mail: every one was scored before (eligible)
    notices.submissions_rescored(ctx, phase=phase, submission_ids=ids)
    ctx.session.commit()
    board = ctx.runtime.board_cells  # the cells computed ahead wait for the refresh this run asks for
    if board is not None:
        for submission_id, score_id, (signature, cells) in ahead:
            board.keep(ctx, submission_id=submission_id, score_id=score_id, signature=signature, cells=cells)
    return ids


def _new_score(rescored: Rescored, *, phase: Phase, version: int) -> Score:
    """Return the Score row of a re-scored result, its primary values and correctness bits filled in."""
    public, private = primary_values(rescored.results, phase.primary_metric)
    return Score(submission_id=rescored.submission_id, label_version=version, results=rescored.results,
                 public_primary=public, private_primary=private, correct_bits=rescored.correct_bits,
                 answered_bits=rescored.answered_bits, slice_tables=rescored.slice_tables)


def _fail_invalid(ctx: ServiceContext, invalid: Invalid, *, version: int) -> bool:
    """Mark a submission failed against the new labels, retire its active score, refund it if it was charged.

    Returns whether it was (False when the row is no longer scored or failed).
    """
    if not claim(ctx, invalid.submission_id, Submission.status.in_(RESCORED), status="failed",
                 validation_errors=invalid.errors,
                 failure_detail=f"the file is not valid against label version {version}"):
        ctx.session.rollback()
        return False
    ctx.session.execute(update(Score).where(Score.submission_id == invalid.submission_id, Score.retired_at.is_(None))
                        .values(retired_at=utcnow()).execution_options(synchronize_session=False))
    submission = ctx.session.get(Submission, invalid.submission_id, populate_existing=True)
    assert submission is not None
    if invalid.was_scored:
        quota.refund(ctx, submission=submission)
    notices.submission_failed(ctx, submission=submission)  # the owner's mail, in this transaction (docs/NOTIFY.md)
    ctx.session.commit()
    return True
