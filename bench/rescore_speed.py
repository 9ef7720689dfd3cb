"""How many submissions per second a re-score job scores, in process, on SQLite or PostgreSQL (docs/ORGANIZING.md).

Builds a throwaway instance (a SQLite file in a temporary folder, or a throwaway
PostgreSQL database at 127.0.0.1:5432): one open phase of ``--items`` binary items (20
categories, head/torso/tail popularity, a 30% private split, two views) and
``--submissions`` scored submissions from ``--participants`` participants (rows and
first scores written in bulk: submission n stores file n % 20 of 20 files scored for real,
with its result and slice list as a scoring run keeps them). The board is built once;
then ``--fix`` labels are corrected (a new label version, as an organizer's upload makes
it; 0 re-scores on the same labels, as after a config change) and the job runs as the job
worker runs it (``run_job``). ``--without-lists`` drops the slice lists first (scores kept
from before migration 0013: every interval is drawn again). The bench prints the rate,
how long its board refreshes took (count, total, longest), and checks that every
submission ended scored with exactly one active score.

Usage: .venv/bin/python bench/rescore_speed.py [--backend sqlite|postgresql|both] [--submissions 2000]
       [--items 2000] [--participants 1000] [--fix 5] [--without-lists] [--max-seconds 120] [--profile FILE]
``--profile`` writes a cProfile of the job to FILE.<backend> and prints its top entries;
a job still running after ``--max-seconds`` is stopped as a newer job would stop it, and
the rate is of what it did. Prints one line per backend and one JSON line.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import multiprocessing
import os
import pstats
import resource
import shutil
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, func, insert, select, update
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from deadline.world import create_database, drop_database, label_file, prediction_file  # noqa: E402

from leaderboard import accounts  # noqa: E402
from leaderboard.board import CELLS_AHEAD, board_changed  # noqa: E402
from leaderboard.disclosure import with_draw  # noqa: E402
from leaderboard.models import Job, Score, Submission, User  # noqa: E402
from leaderboard.operations import run_job  # noqa: E402
from leaderboard.organizing import competitions, phases  # noqa: E402
from leaderboard.phase_data import load_phase_labels  # noqa: E402
from leaderboard.platform import Settings, build_runtime  # noqa: E402
from leaderboard.platform.db import Base, utcnow  # noqa: E402
from leaderboard.submissions import score_submission, store_file  # noqa: E402
from leaderboard.submissions.scoring_runs import primary_values  # noqa: E402
from scoring import read_predictions  # noqa: E402
from scoring.correctness import item_correctness  # noqa: E402
from scoring.evaluate import evaluation  # noqa: E402

VIEWS = [{"name": "Overall", "metric": "accuracy",
          "columns": ["answer_rate", "popularity.head.accuracy", "popularity.tail.accuracy"]},
         {"name": "Long tail", "metric": "popularity.tail.accuracy", "columns": ["popularity.tail.answer_rate"]}]
SCORED_FOR_REAL = 20  # distinct files scored for real; submission n stores file n % 20


def database(backend: str, folder: Path) -> str:
    """Return the URL of a new database with the schema: a SQLite file in folder/data, or a throwaway PostgreSQL one."""
    (folder / "data").mkdir(exist_ok=True)
    url = create_database(backend, folder)
    engine = create_engine(url, poolclass=NullPool)
    Base.metadata.create_all(engine)
    engine.dispose()
    return url


class TimedBoard:
    """The board hook, timed: how often a run refreshed the board and how long each refresh took."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, ctx: Any, *, phase_id: int, submission_ids: Any = None) -> None:
        """Refresh the board as the platform does, and keep the time it took."""
        began = time.perf_counter()
        board_changed(ctx, phase_id=phase_id, submission_ids=submission_ids)
        self.seconds.append(time.perf_counter() - began)


def build(ctx: Any, args: argparse.Namespace, rng: np.random.Generator) -> tuple[int, Any]:
    """Create the organizer, competition, phase, participants and scored submissions; return (phase id, organizer)."""
    organizer = accounts.register_user(ctx, email="org@bench.example", password="benchmark-pass", is_organizer=True)
    competitions.create_competition(ctx, slug="speed", title="Rescore speed", actor=organizer)
    labels = label_file(args.items, rng)
    phase = phases.create_phase(ctx, competition_slug="speed", name="p", labels=labels, actor=organizer,
                                config={"task_type": "binary", "views": VIEWS})
    phase = phases.open_phase(ctx, phase_id=phase.id, actor=organizer)
    rows = [json.loads(line) for line in labels.splitlines()]
    ids, gold = [r["id"] for r in rows], np.array([r["label"] for r in rows])
    users = list(ctx.session.scalars(insert(User).returning(User.id), [
        {"email": f"p{n}@bench.example", "display_name": f"Participant {n:04d}", "password_hash": "!",
         "created_at": utcnow()} for n in range(args.participants)]))
    ctx.session.commit()
    first = scored_files(ctx, phase, ids, gold, rng)
    start = utcnow() - timedelta(days=2)
    for begin in range(0, args.submissions, 500):
        numbers = range(begin, min(args.submissions, begin + 500))
        subs = []
        for n in numbers:
            stored, at = first[n % SCORED_FOR_REAL]["stored"], start + timedelta(seconds=n)
            subs.append({"phase_id": phase.id, "user_id": users[n % len(users)], "description": "",
                         "filename": "p.csv", "file_key": stored.key, "file_sha256": stored.sha256,
                         "file_size": stored.size, "status": "scored", "quota_day": "2026-01-01",
                         "method": "default", "selected": False, "attempts": 0, "is_baseline": False,
                         "created_at": at, "updated_at": at})
        made = ctx.session.scalars(insert(Submission).returning(Submission.id), subs).all()
        ctx.session.execute(insert(Score), [
            {**{k: v for k, v in first[n % SCORED_FOR_REAL].items() if k != "stored"}, "submission_id": sid,
             "created_at": start + timedelta(seconds=n)} for n, sid in zip(numbers, made, strict=True)])
        ctx.session.commit()
    return phase.id, organizer, rows


def scored_files(ctx: Any, phase: Any, ids: list[str], gold: Any, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Store SCORED_FOR_REAL prediction files and score each for real; return their score columns and stored file."""
    label_set = load_phase_labels(ctx, phase)
    first = []
    for _ in range(SCORED_FOR_REAL):
        data = prediction_file(ids, gold, rng)
        predictions = read_predictions(data, label_set)
        found = evaluation(label_set, predictions)
        first.append({"stored": store_file(ctx, phase_id=phase.id, data=data), "label_version": 1,
                      "results": with_draw(found.results, predictions), "slice_tables": found.tables,
                      **dict(zip(("public_primary", "private_primary"),
                                 primary_values(found.results, phase.primary_metric), strict=True)),
                      **dict(zip(("correct_bits", "answered_bits"),
                                 item_correctness(label_set, predictions).packed(), strict=True))})
    return first


def start_job(ctx: Any, args: argparse.Namespace, *, phase_id: int, organizer: Any, rows: list[dict[str, Any]]) -> Any:
    """Correct --fix labels (a new label version) or, with none, re-score on the same labels; return the job."""
    if args.without_lists:
        ctx.session.execute(update(Score).values(slice_tables=None))
        ctx.session.commit()
    if not args.fix:
        return phases.rescore_phase(ctx, phase_id=phase_id, actor=organizer, run=False)
    fixed = [dict(r) for r in rows]
    for row in fixed[::max(1, len(fixed) // args.fix)][:args.fix]:
        row["label"] = not row["label"]
    labels = "".join(json.dumps(r) + "\n" for r in fixed).encode()
    return phases.replace_labels(ctx, phase_id=phase_id, labels=labels, actor=organizer, run=False)


def check(ctx: Any, phase_id: int) -> dict[str, int]:
    """Return how many submissions are scored, how many active scores the phase has, and how many in all."""
    scored = ctx.session.scalar(select(func.count()).select_from(Submission)
                                .where(Submission.phase_id == phase_id, Submission.status == "scored"))
    active = ctx.session.scalar(select(func.count()).select_from(Score).join(Submission)
                                .where(Submission.phase_id == phase_id, Score.retired_at.is_(None)))
    every = ctx.session.scalar(select(func.count()).select_from(Score).join(Submission)
                               .where(Submission.phase_id == phase_id))
    return {"scored": int(scored or 0), "active_scores": int(active or 0), "scores": int(every or 0)}


def children_cpu() -> float:
    """Return the CPU seconds of this process's ended children (the job's scoring processes), reaping those done."""
    deadline = time.monotonic() + 15
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def supersede(runtime: Any, job_id: int) -> None:
    """Stop a job that runs past --max-seconds as a newer job would (its run stops at its next batch)."""
    with runtime.sessions() as session:
        session.execute(update(Job).where(Job.id == job_id, Job.status == "running")
                        .values(status="failed", error="stopped by the bench at --max-seconds", claimed_by=None))
        session.commit()


def timed_run(ctx: Any, runtime: Any, job_id: int, args: argparse.Namespace) -> tuple[float, float, float, Any]:
    """Run the job (superseded after --max-seconds); return its wall, own CPU and scoring processes' CPU, profiler."""
    profiler = cProfile.Profile() if args.profile else None
    began, cpu, pool_cpu = time.perf_counter(), time.process_time(), children_cpu()
    timer = threading.Timer(args.max_seconds, supersede, args=(runtime, job_id))
    timer.start()
    if profiler is not None:
        profiler.enable()
    run_job(ctx, job_id=job_id)
    if profiler is not None:
        profiler.disable()
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    timer.cancel()
    return seconds, cpu, children_cpu() - pool_cpu, profiler


def measure(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    """Build one instance on backend, re-score its phase, and return the figures."""
    folder = Path(tempfile.mkdtemp(prefix=f"rescore-speed-{backend}-"))
    url = database(backend, folder)
    board = TimedBoard()
    try:
        settings = Settings.from_env({}, data_dir=str(folder), database_url=url, secret_key="bench", sweep_seconds=0)
        runtime = build_runtime(settings, score=score_submission, board_changed=board, run_job=run_job,
                                board_cells=CELLS_AHEAD)
        with runtime.sessions() as session:
            ctx = runtime.context(session)
            began = time.perf_counter()
            phase_id, organizer, rows = build(ctx, args, np.random.default_rng(args.seed))
            built = time.perf_counter() - began
            board(ctx, phase_id=phase_id)
            first_board = sum(board.seconds)
            board.seconds.clear()
            job = start_job(ctx, args, phase_id=phase_id, organizer=organizer, rows=rows)
            seconds, cpu, pool_cpu, profiler = timed_run(ctx, runtime, job.id, args)
            ctx.session.rollback()
            ctx.session.refresh(job)
            figures = {"backend": backend, "submissions": args.submissions, "items": args.items, "fixed": args.fix,
                       "slice_lists": not args.without_lists,
                       "job": job.status, "done": job.done, "error": job.error, "seconds": round(seconds, 2),
                       "per_second": round(job.done / seconds, 1), "cpu_s": round(cpu, 2),
                       "pool_cpu_s": round(pool_cpu, 2),
                       "cpu_ms_per_submission": round(1000 * cpu / max(job.done, 1), 1),
                       "pool_cpu_ms_per_submission": round(1000 * pool_cpu / max(job.done, 1), 1),
                       "build_s": round(built, 1),
                       "first_board_s": round(first_board, 2), "board_refreshes": len(board.seconds),
                       "board_refresh_total_s": round(sum(board.seconds), 2),
                       "board_refresh_max_s": round(max(board.seconds, default=0.0), 2), **check(ctx, phase_id)}
        runtime.engine.dispose()
        if profiler is not None:
            profiler.dump_stats(f"{args.profile}.{backend}")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile_lines)
        return figures
    finally:
        drop_database(url)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    """Measure each backend asked for; print a line each and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--submissions", type=int, default=2000)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--fix", type=int, default=5, help="labels corrected before the re-score (0: the same labels)")
    parser.add_argument("--without-lists", action="store_true",
                        help="drop the scores' slice lists first (every interval is drawn again)")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="stop the job after this long (the rate is then of what it did)")
    parser.add_argument("--profile", help="write a cProfile of the job to FILE.<backend> and print its top")
    parser.add_argument("--profile-lines", type=int, default=45)
    args = parser.parse_args()
    load = os.getloadavg()
    results = []
    for backend in (("sqlite", "postgresql") if args.backend == "both" else (args.backend,)):
        figures = measure(backend, args)
        results.append(figures)
        print(f"{backend:10} {figures['done']}/{figures['submissions']} re-scored ({args.fix} labels fixed, "
              f"{'with' if figures['slice_lists'] else 'without'} slice lists) in {figures['seconds']} s: "
              f"{figures['per_second']}/s ({figures['job']}); board refreshes {figures['board_refreshes']}, "
              f"{figures['board_refresh_total_s']} s in all, longest {figures['board_refresh_max_s']} s; "
              f"scored {figures['scored']}, active scores {figures['active_scores']}; CPU per submission "
              f"{figures['cpu_ms_per_submission']} ms in the job's process, {figures['pool_cpu_ms_per_submission']} ms "
              f"in its scoring processes", flush=True)
    print(json.dumps({"load_before": [round(x, 2) for x in load],
                      "load_after": [round(x, 2) for x in os.getloadavg()], "runs": results}))


if __name__ == "__main__":
    main()
