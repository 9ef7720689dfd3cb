"""Re-scoring at deadline scale (docs/ORGANIZING.md, Jobs): the API answers at once, the job ends, the board stays up.

Builds an instance on a throwaway PostgreSQL database (127.0.0.1:5432, user postgres):
one competition with two open phases of ``--items`` binary items (categories, head/torso/tail
popularity, a private split), ``--small`` and ``--large`` scored submissions by
``--users`` participants (rows and scores written in bulk from ``--files`` distinct
prediction files, so building takes seconds), then serves it with gunicorn
(``--workers`` processes x ``--threads`` threads, embedded mode: jobs run on the worker
thread of the process that was asked). It measures:

1. the leaderboard page (``GET /phases/<large>/leaderboard``) while nothing runs: p50/p95/p99;
2. ``POST /api/v1/phases/<small>/rescore``: the answer's time (target < 1 s) and the job's duration;
3. ``POST /api/v1/phases/<large>/rescore`` and, until that job is done, ``--clients`` client
   threads reading the large phase's leaderboard page: p50/p95/p99/max, errors, and
   whether every page still listed entries (old scores stay active until replaced).

Usage: python bench/rescore_bench.py [--large 10000] [--small 2000] [--items 300] [--clients 4]
Prints a table and one JSON line. Bounded: the large job is followed for --max-seconds at most.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import accounts  # noqa: E402
from leaderboard.accounts import get_phase  # noqa: E402
from leaderboard.board import board_changed  # noqa: E402
from leaderboard.models import Score, Submission, User  # noqa: E402
from leaderboard.operations import run_job  # noqa: E402
from leaderboard.organizing import competitions, phases  # noqa: E402
from leaderboard.phase_data import load_phase_labels  # noqa: E402
from leaderboard.platform import ServiceContext, Settings, build_runtime  # noqa: E402
from leaderboard.platform.db import Base, utcnow  # noqa: E402
from leaderboard.submissions import score_submission, store_file  # noqa: E402
from leaderboard.submissions.scoring_runs import primary_values  # noqa: E402
from scoring import evaluate, read_predictions  # noqa: E402
from scoring.correctness import item_correctness  # noqa: E402

PG_ADMIN = os.environ.get("TAILBOARD_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def label_file(items: int, rng: np.random.Generator) -> bytes:
    """Return a binary label file with categories, numeric popularity and a private split."""
    popularity = np.round(np.exp(rng.normal(5.0, 2.0, items))).astype(int)
    lines = [json.dumps({"id": f"q{i:05d}", "label": bool(rng.random() < 0.5), "category": f"cat{i % 12:02d}",
                         "popularity": int(popularity[i]), "split": "private" if rng.random() < 0.3 else "public"})
             for i in range(items)]
    return ("\n".join(lines) + "\n").encode()


def prediction_file(labels: bytes, rng: np.random.Generator) -> bytes:
    """Return a prediction CSV right on a random share of items, with confidences and a few abstentions."""
    skill = rng.uniform(0.5, 0.9)
    rows = ["id,prediction,confidence"]
    for line in labels.splitlines():
        item = json.loads(line)
        if rng.random() < 0.05:
            rows.append(f"{item['id']},,")
            continue
        answer = item["label"] if rng.random() < skill else not item["label"]
        rows.append(f"{item['id']},{str(answer).lower()},{rng.uniform(0.5, 1):.3f}")
    return ("\n".join(rows) + "\n").encode()


def fill_phase(ctx: ServiceContext, phase_id: int, users: list[int], count: int, files: int,
               rng: np.random.Generator) -> None:
    """Insert count scored submissions (rows and scores in bulk) spread over users, from a few distinct files."""
    phase = get_phase(ctx, phase_id)
    labels = load_phase_labels(ctx, phase)
    label_bytes = ctx.labels.read_bytes(phase.labels_key)
    made = []
    for _ in range(files):
        data = prediction_file(label_bytes, rng)
        stored = store_file(ctx, phase_id=phase_id, data=data)
        predictions = read_predictions(data, labels)
        results = evaluate(labels, predictions)
        correct, answered = item_correctness(labels, predictions).packed()
        made.append((stored, results, primary_values(results, phase.primary_metric), correct, answered))
    start = utcnow() - timedelta(days=2)
    for begin in range(0, count, 1000):
        subs = []
        for n in range(begin, min(count, begin + 1000)):
            stored = made[n % files][0]
            subs.append({"phase_id": phase_id, "user_id": users[n % len(users)], "description": f"run {n}",
                         "filename": "p.csv", "file_key": stored.key, "file_sha256": stored.sha256,
                         "file_size": stored.size, "status": "scored", "quota_day": "2026-01-01",
                         "method": "default", "selected": False, "attempts": 0,
                         "created_at": start + timedelta(seconds=n), "updated_at": start + timedelta(seconds=n)})
        ids = ctx.session.scalars(insert(Submission).returning(Submission.id), subs).all()
        scores = []
        for n, sid in zip(range(begin, begin + len(ids)), ids, strict=True):
            _, results, (public, private), correct, answered = made[n % files]
            scores.append({"submission_id": sid, "label_version": 1, "results": results, "public_primary": public,
                           "private_primary": private, "correct_bits": correct, "answered_bits": answered,
                           "created_at": start + timedelta(seconds=n)})
        ctx.session.execute(insert(Score), scores)
        ctx.session.commit()
    board_changed(ctx, phase_id=phase_id)  # bulk rows bypass the writers' door: announce them once


def build(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    """Create the instance's competition, phases, people and submissions; return ids and an organizer token."""
    rng = np.random.default_rng(args.seed)
    runtime = build_runtime(settings, score=score_submission, board_changed=board_changed, run_job=run_job)
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        organizer = accounts.register_user(ctx, email="org@bench.example", password="benchmark-pass",
                                           is_organizer=True)
        _, token = accounts.create_token(ctx, user=organizer)
        competitions.create_competition(ctx, slug="bench", title="Rescore bench", actor=organizer)
        labels = label_file(args.items, rng)
        made = {}
        for name in ("small", "large"):
            phase = phases.create_phase(ctx, competition_slug="bench", name=name, labels=labels, actor=organizer,
                                        config={"task_type": "binary", "breakdowns": ["category"]})
            made[name] = phases.open_phase(ctx, phase_id=phase.id, actor=organizer).id
        rows = [{"email": f"p{n}@bench.example", "display_name": f"Participant {n:04d}", "password_hash": "!",
                 "created_at": utcnow()} for n in range(args.users)]
        users = list(session.scalars(insert(User).returning(User.id), rows))
        session.commit()
        fill_phase(ctx, made["small"], users, args.small, args.files, rng)
        fill_phase(ctx, made["large"], users, args.large, args.files, rng)
    runtime.engine.dispose()
    return {"token": token, **made}


def percentiles(values: list[float]) -> dict[str, float]:
    """Return p50/p95/p99/max of latencies in milliseconds."""
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50_ms": round(pick(0.5) * 1000, 1), "p95_ms": round(pick(0.95) * 1000, 1),
            "p99_ms": round(pick(0.99) * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1),
            "mean_ms": round(statistics.fmean(ordered) * 1000, 1)}


def call(url: str, *, method: str = "GET", token: str | None = None, timeout: float = 60) -> tuple[int, bytes, float]:
    """Return (status, body, seconds) of one HTTP request to the local server."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    began = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read(), time.perf_counter() - began
    except urllib.error.HTTPError as error:
        return error.code, error.read(), time.perf_counter() - began


def read_board(base: str, phase_id: int, stop: threading.Event, out: list[tuple[int, float, bool]],
               limit: int) -> None:
    """Read the leaderboard page until stop is set (at most limit times); record status, time, rows present."""
    for _ in range(limit):
        if stop.is_set():
            return
        status, body, seconds = call(f"{base}/phases/{phase_id}/leaderboard")
        out.append((status, seconds, b"Participant" in body))
        if status == 200 and b"Participant" not in body and os.environ.get("RESCORE_BENCH_DUMP"):
            Path(os.environ["RESCORE_BENCH_DUMP"]).write_bytes(body)


def sample_board(base: str, phase_id: int, clients: int, per_client: int) -> list[tuple[int, float, bool]]:
    """Read the board from several client threads a fixed number of times; return what they saw."""
    seen: list[tuple[int, float, bool]] = []
    threads = [threading.Thread(target=read_board, args=(base, phase_id, threading.Event(), seen, per_client))
               for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


def follow_job(base: str, url: str, token: str, max_seconds: float) -> tuple[dict[str, Any], float]:
    """Poll a job until it ends (or max_seconds pass); return its last state and the seconds it took."""
    began = time.perf_counter()
    state: dict[str, Any] = {}
    while time.perf_counter() - began < max_seconds:
        status, body, _ = call(url, token=token)
        state = json.loads(body) if status == 200 else {"status": f"http {status}"}
        if state.get("status") in ("done", "failed"):
            break
        time.sleep(0.5)
    return state, time.perf_counter() - began


def serve(env: dict[str, str], port: int, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    """Start gunicorn on the instance and wait until it answers."""
    server = subprocess.Popen([str(ROOT / ".venv/bin/gunicorn"), "-w", str(args.workers), "--threads",
                               str(args.threads), "-b", f"127.0.0.1:{port}", "--timeout", "120", "app:app"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=args.log_file)
    for _ in range(100):
        try:
            if call(f"http://127.0.0.1:{port}/", timeout=2)[0] == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"gunicorn did not answer; see {args.log}")


def main() -> None:
    """Build, serve, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--users", type=int, default=400)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--max-seconds", type=float, default=1500)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--log", default=str(Path(tempfile.gettempdir()) / "rescore_bench_gunicorn.log"))
    args = parser.parse_args()
    args.log_file = open(args.log, "wb")  # noqa: SIM115  (gunicorn writes here until the bench ends)
    name = f"tb_bench_rescore_{os.getpid()}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)
    workdir = Path(tempfile.mkdtemp(prefix="rescore-bench-"))
    server = None
    try:
        engine = create_engine(url, poolclass=NullPool)
        Base.metadata.create_all(engine)
        engine.dispose()
        env = {**os.environ, "DATABASE_URL": url, "TAILBOARD_DATA_DIR": str(workdir),
               "SECRET_KEY": secrets.token_hex(16), "TAILBOARD_SCORING": "inline", "TAILBOARD_SWEEP_SECONDS": "0"}
        settings = Settings.from_env(env)
        began = time.perf_counter()
        ids = build(settings, args)
        built = time.perf_counter() - began
        server = serve(env, args.port, args)
        base = f"http://127.0.0.1:{args.port}"
        began = time.perf_counter()
        for phase in ("small", "large"):  # the first read builds each board from the bulk-written scores
            call(f"{base}/phases/{ids[phase]}/leaderboard", timeout=3000)
        first_read = time.perf_counter() - began
        idle = sample_board(base, ids["large"], args.clients, 50)
        status, body, small_post = call(f"{base}/api/v1/phases/{ids['small']}/rescore", method="POST",
                                        token=ids["token"])
        small = json.loads(body)
        small_state, small_seconds = follow_job(base, small["url"], ids["token"], args.max_seconds)
        stop, during = threading.Event(), []
        readers = [threading.Thread(target=read_board, args=(base, ids["large"], stop, during, 100_000))
                   for _ in range(args.clients)]
        status_large, body, large_post = call(f"{base}/api/v1/phases/{ids['large']}/rescore", method="POST",
                                              token=ids["token"])
        large = json.loads(body)
        for thread in readers:
            thread.start()
        large_state, large_seconds = follow_job(base, large["url"], ids["token"], args.max_seconds)
        stop.set()
        for thread in readers:
            thread.join()
        report = {
            "items": args.items, "submissions": {"small": args.small, "large": args.large},
            "build_seconds": round(built, 1), "first_board_reads_seconds": round(first_read, 1),
            "gunicorn": f"{args.workers} workers x {args.threads} threads, embedded jobs",
            "small_rescore": {"http": status, "answer_ms": round(small_post * 1000, 1), "job": small_state,
                              "job_seconds": round(small_seconds, 1)},
            "large_rescore": {"http": status_large, "answer_ms": round(large_post * 1000, 1), "job": large_state,
                              "job_seconds": round(large_seconds, 1),
                              "per_second": round(large_state.get("done", 0) / large_seconds, 1)},
            "board_idle": percentiles([s for code, s, _ in idle if code == 200]),
            "board_idle_pages_without_rows": sum(1 for code, _, rows in idle if code == 200 and not rows),
            "board_during_rescore": percentiles([s for code, s, _ in during if code == 200]),
            "board_errors_during": sum(1 for code, _, _ in during if code != 200),
            "board_pages_without_rows": sum(1 for code, _, rows in during if code == 200 and not rows),
        }
        print(f"rescore answer: {report['small_rescore']['answer_ms']} ms ({args.small} submissions), "
              f"{report['large_rescore']['answer_ms']} ms ({args.large})")
        print(f"jobs: {args.small} in {report['small_rescore']['job_seconds']} s "
              f"({small_state.get('status')}), {args.large} in {report['large_rescore']['job_seconds']} s "
              f"({large_state.get('status')}, {report['large_rescore']['per_second']}/s)")
        print(f"leaderboard page idle:   {report['board_idle']}")
        print(f"leaderboard page during: {report['board_during_rescore']}, errors {report['board_errors_during']}, "
              f"pages without rows {report['board_pages_without_rows']}")
        print(json.dumps(report))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
