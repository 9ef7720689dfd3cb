"""Scoring the files of a re-score: in the job's own thread, or in a lower-priority process beside it.

Scoring a file (read_predictions, evaluate, with_draw, per-item correctness) is pure CPU
work on bytes and a label set; nothing is written. The file's earlier result and slice
list come along: a slice whose count tables did not change keeps its interval instead of
drawing it again (scoring/metrics/reuse.py), which is most of the cost. The result's
board cells are computed there too, for the board as it stands when the job starts (a
``CellsView`` from ``ctx.runtime.board_cells``), and left for the refresh that needs them
(board/cells.py ``keep_ahead``).

A job of ``POOL_FROM`` submissions or more scores its batches in a pool of ``PROCESSES`` spawned processes (at niceness
``NICENESS``, so a site's requests go first), so that while one batch is scored there the
job's thread records the previous one and refreshes the board: the two overlap
(operations/rescoring.py). A smaller job, or a process that cannot start one (a daemonic
worker, no ``spawn``), scores in its own thread, the same way. A pool that breaks
mid-run (a worker killed) scores the batch again in the thread and is not used again.
Each pool process exits when the process that started it is gone (killed with -9).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from leaderboard.disclosure import with_draw
from leaderboard.platform.runtime import CellsView
from scoring import LabelSet, PredictionFileError, read_predictions
from scoring.correctness import item_correctness
from scoring.evaluate import evaluation
from scoring.metrics.reuse import known_intervals

log = logging.getLogger(__name__)

PROCESSES = max(1, min(4, os.cpu_count() or 1))
"""Scoring processes of a pool: one per core, at most 4 (at a lower priority, they take what the site leaves)."""
POOL_FROM = 200
"""A job re-scoring fewer submissions scores in its own thread (starting a process costs about a second)."""
NICENESS = 10
"""How much lower a pool process runs than the site's processes (os.nice)."""
PER_TASK = 10
"""Files sent to a pool process at once."""


@dataclass(frozen=True)
class FileToScore:
    """One submission's file as read from storage, whether it was charged (scored) before, and its earlier score.

    ``earlier`` is the active score's result object and slice list as stored (JSON text), when they are.
    """

    submission_id: int
    was_scored: bool
    data: bytes
    earlier: tuple[str, str] | None = None


@dataclass(frozen=True)
class Rescored:
    """A file scored again, waiting to be recorded: its submission, result object, correctness bits, slice list."""

    submission_id: int
    results: dict[str, Any]
    correct_bits: bytes
    answered_bits: bytes
    slice_tables: list[Any]
    cells: tuple[str, list[Any]] | None = None  # (board signature, cells) computed ahead


@dataclass(frozen=True)
class Invalid:
    """A file no longer valid against the labels: its submission, whether it was charged, the validation errors."""

    submission_id: int
    was_scored: bool
    errors: dict[str, object]


Outcome = Rescored | Invalid
Pending = Callable[[], list[Outcome]]
"""A batch being scored: call it for its outcomes (in the batch's order)."""


def score_file(task: FileToScore, labels: LabelSet, *, max_bytes: int, board: CellsView | None = None) -> Outcome:
    """Score one file against labels: result with its draw, correctness bits, board cells; or why it is invalid."""
    try:
        predictions = read_predictions(task.data, labels, max_bytes=max_bytes)
    except PredictionFileError as error:
        return Invalid(task.submission_id, task.was_scored, error.to_json())
    correct, answered = item_correctness(labels, predictions).packed()
    found = evaluation(labels, predictions, known=_known(task.earlier))
    results = with_draw(found.results, predictions)
    cells = None if board is None else (board.signature, board.cells(results))
    return Rescored(task.submission_id, results, correct, answered, found.tables, cells)


def _known(earlier: tuple[str, str] | None) -> dict[str, Any]:
    """Return the intervals of an earlier score's stored result and slice list; none when it has no list."""
    if earlier is None:
        return {}
    try:
        return known_intervals(json.loads(earlier[0]), json.loads(earlier[1]))
    except ValueError:  # not JSON: nothing is reused, every interval is drawn
        return {}


class Scorer:
    """Scores batches of files against one label set, in a pool when the job is large enough, else in this thread."""

    def __init__(self, labels: LabelSet, *, key: tuple[str, str], max_bytes: int, pooled: bool,
                 board: CellsView | None = None) -> None:
        self.labels, self.key, self.max_bytes, self.board = labels, key, max_bytes, board
        self.pool = _start_pool(labels, max_bytes, board) if pooled else None

    def submit(self, files: list[FileToScore]) -> Pending:
        """Start scoring files (in the pool) or defer it to the call (in this thread); return the batch's outcomes."""
        if self.pool is None or not files:
            return lambda: self._here(files)
        try:
            futures = [self.pool.submit(_score_in_pool, files[i:i + PER_TASK])
                       for i in range(0, len(files), PER_TASK)]
        except Exception:  # the pool is broken or shut down: this thread scores from now on
            log.warning("the re-score's scoring pool cannot take work; scoring in the job's thread", exc_info=True)
            self.close()
            return self.submit(files)
        return lambda: self._collect(futures, files)

    def _collect(self, futures: list[Future[list[Outcome]]], files: list[FileToScore]) -> list[Outcome]:
        """Return the outcomes of a pooled batch; if the pool broke, score the batch in this thread."""
        try:
            return [outcome for future in futures for outcome in future.result()]
        except Exception:  # a pool process died (killed, out of memory): the work is redone here
            log.warning("the re-score's scoring pool failed; scoring in the job's thread", exc_info=True)
            self.close()
            return self._here(files)

    def _here(self, files: list[FileToScore]) -> list[Outcome]:
        """Score files in this thread."""
        return [score_file(f, self.labels, max_bytes=self.max_bytes, board=self.board) for f in files]

    def close(self) -> None:
        """Stop the pool's processes (queued work is dropped); the scorer goes on in this thread."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None


def _start_pool(labels: LabelSet, max_bytes: int, board: CellsView | None) -> ProcessPoolExecutor | None:
    """Return a pool of spawned scoring processes holding labels, or None when this process cannot start one."""
    try:
        return ProcessPoolExecutor(PROCESSES, mp_context=get_context("spawn"), initializer=_start_worker,
                                   initargs=(labels, max_bytes, board, os.getpid()))
    except Exception:  # e.g. a daemonic worker process may not have children
        log.warning("no scoring pool for the re-score; scoring in the job's thread", exc_info=True)
        return None


_WORKER: dict[str, Any] = {}
"""In a pool process: the label set, the upload limit and the board view it scores with."""


def _start_worker(labels: LabelSet, max_bytes: int, board: CellsView | None, parent: int) -> None:
    """Set up a pool process: lower priority, the labels, and an exit once the parent process is gone."""
    os.nice(NICENESS)
    _WORKER.update(labels=labels, max_bytes=max_bytes, board=board)
    threading.Thread(target=_exit_with, args=(parent,), daemon=True, name="rescore-parent-watch").start()


def _exit_with(parent: int) -> None:
    """Exit this pool process as soon as its parent is no longer its parent (killed, or ended)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _score_in_pool(files: list[FileToScore]) -> list[Outcome]:
    """Score files in a pool process with the labels it was started with."""
    return [score_file(f, _WORKER["labels"], max_bytes=_WORKER["max_bytes"], board=_WORKER["board"]) for f in files]
