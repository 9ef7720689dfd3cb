"""Platform benchmark (issue 10): the leaderboard page and API at 10,000 submissions, as deployed.

For each database (SQLite file, throwaway PostgreSQL database at 127.0.0.1:5432) it builds
an instance: one phase of ``--items`` binary items (20 categories, head/torso/tail, a 30%
private split, two views), ``--participants`` participants and ``--submissions`` scored
submissions (a fifth of the participants with a second method, some with metadata).
``--files`` distinct prediction files are scored for real (scoring.evaluate, per-item bits)
and their results stored for every submission in bulk, then the board is built once
through the writers' own refresh (``board.changes.board_changed``, behind ``ctx.board_changed``). Then it serves the
instance with gunicorn as deployed (``deploy/gunicorn.conf.py``: 5 workers x 16 threads
on this machine, no keep-alive) and measures, with an asyncio client on distinct
loopback addresses, at 1 and 50 concurrent clients (closed loop: each client sends its
next request when the last one is answered):

- ``GET /phases/<id>/leaderboard`` (the page, anonymous) and ``GET /api/v1/phases/<id>/leaderboard``:
  p50 / p99 / max latency, requests per second, errors;
- the page again with ``If-None-Match`` (what a returning browser sends): 304s;
- the first page's weight (HTML bytes, and gzip-compressed as nginx would send it);
- per-submission scoring: ``scoring.evaluate`` alone, and a whole inline upload (store,
  validate, charge, score, record, board refresh) into the 10,000-submission phase;
- the board's first build from the stored scores and one refresh.

Usage: python bench/platform_bench.py [--db sqlite postgres] [--submissions 10000] [--participants 1000]
       [--items 2000] [--files 400] [--requests 3000]
Prints a table per database and one JSON line with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
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

from alembic import command  # noqa: E402
from alembic.config import Config  # noqa: E402

from leaderboard import accounts  # noqa: E402
from leaderboard.accounts import get_phase  # noqa: E402
from leaderboard.board import board_changed  # noqa: E402
from leaderboard.models import Score, Submission, User  # noqa: E402
from leaderboard.operations import run_job  # noqa: E402
from leaderboard.organizing import competitions, phases  # noqa: E402
from leaderboard.phase_data import load_phase_labels  # noqa: E402
from leaderboard.platform import ServiceContext, Settings, build_runtime  # noqa: E402
from leaderboard.platform.db import utcnow  # noqa: E402
from leaderboard.submissions import accept_submission, score_submission, store_file  # noqa: E402
from leaderboard.submissions.scoring_runs import primary_values  # noqa: E402
from scoring import evaluate, read_predictions  # noqa: E402
from scoring.correctness import item_correctness  # noqa: E402

PG_ADMIN = os.environ.get("TAILBOARD_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
VIEWS = [{"name": "Overall", "metric": "accuracy",
          "columns": ["answer_rate", "popularity.head.accuracy", "popularity.tail.accuracy"]},
         {"name": "Long tail", "metric": "popularity.tail.accuracy", "columns": ["popularity.tail.answer_rate"]}]
MODELS = ("llama-3-8b", "mistral-7b", "gpt-4o", "qwen2-72b", "olmo-7b")


def label_file(items: int, rng: np.random.Generator) -> bytes:
    """Return a binary label file: 20 categories, head/torso/tail, a 30% private split."""
    lines = [json.dumps({"id": f"q{i:05d}", "label": bool(rng.random() < 0.5), "category": f"cat{i % 20:02d}",
                         "popularity": ("head", "torso", "tail")[int(rng.integers(0, 3))],
                         "split": "private" if rng.random() < 0.3 else "public"}) for i in range(items)]
    return ("\n".join(lines) + "\n").encode()


def prediction_file(labels: bytes, rng: np.random.Generator) -> bytes:
    """Return a prediction CSV right on a random share of items, with a few abstentions."""
    skill, rows = rng.uniform(0.5, 0.92), ["id,prediction"]
    for line in labels.splitlines():
        item = json.loads(line)
        if rng.random() < 0.03:
            rows.append(f"{item['id']},")
            continue
        rows.append(f"{item['id']},{str(item['label'] if rng.random() < skill else not item['label']).lower()}")
    return ("\n".join(rows) + "\n").encode()


def create_database(kind: str, tmp: Path) -> str:
    """Return the URL of an empty database of this kind, migrated to head with Alembic."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp / 'bench.sqlite3'}"
    else:
        name = f"tb_bench_{os.getpid()}"
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        url = make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")
    return url


def drop_database(kind: str, url: str) -> None:
    """Drop the throwaway PostgreSQL database (SQLite files go with the temp dir)."""
    if kind == "postgres":
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
        admin.dispose()


def fill(ctx: ServiceContext, phase_id: int, args: argparse.Namespace, rng: np.random.Generator,
         label_bytes: bytes) -> dict[str, float]:
    """Insert participants and scored submissions in bulk; return how long scoring a file took (evaluate only)."""
    phase = get_phase(ctx, phase_id)
    labels = load_phase_labels(ctx, phase)
    users = ctx.session.scalars(insert(User).returning(User.id), [
        {"email": f"p{n}@bench.example", "display_name": f"Participant {n:04d}", "password_hash": "!",
         "created_at": utcnow()} for n in range(args.participants)]).all()
    ctx.session.commit()
    made, timings = [], []
    for _ in range(args.files):
        data = prediction_file(label_bytes, rng)
        predictions = read_predictions(data, labels)
        started = time.perf_counter()
        results = evaluate(labels, predictions)
        timings.append(time.perf_counter() - started)
        correct, answered = item_correctness(labels, predictions).packed()
        stored = store_file(ctx, phase_id=phase_id, data=data)
        made.append((stored, results, primary_values(results, phase.primary_metric), correct, answered))
    start = utcnow() - timedelta(days=3)
    for begin in range(0, args.submissions, 500):
        subs = []
        for n in range(begin, min(args.submissions, begin + 500)):
            user = n % len(users)
            second = user % 5 == 0 and n % 2 == 1
            meta = ({"model": MODELS[user % len(MODELS)], "open_weights": user % 3 != 0, "parameters_b": 7 + user % 65,
                     "prompting": "few-shot" if second else "zero-shot"} if user % 4 == 0 else None)
            stored = made[n % args.files][0]
            subs.append({"phase_id": phase_id, "user_id": users[user], "description": "", "filename": "p.csv",
                         "file_key": stored.key, "file_sha256": stored.sha256, "file_size": stored.size,
                         "status": "scored", "quota_day": "2026-01-01", "method": "cot" if second else "default",
                         "entry_metadata": meta, "selected": False, "attempts": 0, "is_baseline": False,
                         "created_at": start + timedelta(seconds=n), "updated_at": start + timedelta(seconds=n)})
        ids = ctx.session.scalars(insert(Submission).returning(Submission.id), subs).all()
        scores = []
        for n, sid in zip(range(begin, begin + len(ids)), ids, strict=True):
            _, results, (public, private), correct, answered = made[n % args.files]
            scores.append({"submission_id": sid, "label_version": 1, "results": results, "public_primary": public,
                           "private_primary": private, "correct_bits": correct, "answered_bits": answered,
                           "created_at": start + timedelta(seconds=n)})
        ctx.session.execute(insert(Score), scores)
        ctx.session.commit()
    return {"evaluate_p50_ms": 1000 * statistics.median(timings), "evaluate_p99_ms": 1000 * quantile(timings, 0.99)}


def build(url: str, data_dir: Path, args: argparse.Namespace) -> tuple[int, dict[str, float]]:
    """Create the instance and its board; return the phase id and the build figures."""
    rng = np.random.default_rng(args.seed)
    settings = Settings.from_env({}, data_dir=data_dir, database_url=url, secret_key="bench", sweep_seconds=0)
    runtime = build_runtime(settings, score=score_submission, board_changed=board_changed, run_job=run_job)
    figures: dict[str, float] = {}
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        organizer = accounts.register_user(ctx, email="org@bench.example", password="benchmark-pass",
                                           is_organizer=True)
        competitions.create_competition(ctx, slug="bench", title="Platform bench", actor=organizer)
        labels = label_file(args.items, rng)
        phase = phases.create_phase(ctx, competition_slug="bench", name="Long-tail claims", labels=labels,
                                    actor=organizer, config={"task_type": "binary", "views": VIEWS})
        phase = phases.open_phase(ctx, phase_id=phase.id, actor=organizer)
        started = time.perf_counter()
        figures.update(fill(ctx, phase.id, args, rng, labels))
        figures["fill_s"] = time.perf_counter() - started
        started = time.perf_counter()
        board_changed(ctx, phase_id=phase.id)  # bulk rows bypass the writers' door: announce them once
        figures["first_board_build_s"] = time.perf_counter() - started
        started = time.perf_counter()
        board_changed(ctx, phase_id=phase.id)
        figures["refresh_without_change_ms"] = 1000 * (time.perf_counter() - started)
        figures.update(upload_timings(ctx, phase.id, labels, rng))
    runtime.engine.dispose()
    return phase.id, figures


def upload_timings(ctx: ServiceContext, phase_id: int, labels: bytes, rng: np.random.Generator) -> dict[str, float]:
    """Return how long whole inline uploads into the full phase take (store, score, record, board refresh)."""
    timings = []
    for n in range(5):
        user = accounts.register_user(ctx, email=f"late{n}@bench.example", password="benchmark-pass")
        data = prediction_file(labels, rng)
        started = time.perf_counter()
        accept_submission(ctx, phase_id=phase_id, user=user, filename="late.csv", stream=io.BytesIO(data))
        timings.append(time.perf_counter() - started)
    return {"upload_scored_p50_ms": 1000 * statistics.median(timings), "upload_scored_max_ms": 1000 * max(timings)}


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(url: str, data_dir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start gunicorn with deploy/gunicorn.conf.py on the instance; return the process and its port."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "TAILBOARD_DATA_DIR": str(data_dir), "SECRET_KEY": "bench",
           "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_ACCESSLOG": "", "TAILBOARD_SWEEP_SECONDS": "0",
           "TAILBOARD_API_RATELIMIT": "1000000 per minute"}
    process = subprocess.Popen([str(ROOT / ".venv" / "bin" / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "app:app"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
            return process, port
        except OSError:
            time.sleep(0.3)
    process.terminate()
    raise RuntimeError("gunicorn did not start")


async def one_request(port: int, path: str, source: str, headers: str) -> tuple[float, int, int]:
    """Send one GET from a source address; return (seconds, status, body bytes)."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n{headers}\r\n".encode())
    data = await reader.read(-1)
    writer.close()
    elapsed = time.perf_counter() - started
    head, _, body = data.partition(b"\r\n\r\n")
    return elapsed, int(head.split(b" ", 2)[1]), len(body)


async def load(port: int, path: str, clients: int, requests: int, headers: str = "") -> dict[str, float]:
    """Run clients closed-loop until requests are answered; return latency percentiles and throughput."""
    latencies: list[float] = []
    errors = 0
    remaining = requests

    async def client(index: int) -> None:
        nonlocal remaining, errors
        source = f"127.0.0.{2 + index % 250}"  # one address per client: per-address limits see 50 clients
        while remaining > 0:
            remaining -= 1
            elapsed, status, _ = await one_request(port, path, source, headers)
            latencies.append(elapsed)
            errors += status not in (200, 304)

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    wall = time.perf_counter() - started
    return {"p50_ms": 1000 * quantile(latencies, 0.5), "p99_ms": 1000 * quantile(latencies, 0.99),
            "max_ms": 1000 * max(latencies), "rps": len(latencies) / wall, "errors": errors, "n": len(latencies)}


def quantile(values: list[float], q: float) -> float:
    """Return the q-quantile of values (numpy's linear interpolation)."""
    return float(np.quantile(np.asarray(values), q))


def measure(port: int, phase_id: int, args: argparse.Namespace) -> dict[str, Any]:
    """Measure the page and the API at 1 and 50 clients, the page's weight and revalidation."""
    page, api = f"/phases/{phase_id}/leaderboard", f"/api/v1/phases/{phase_id}/leaderboard"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{page}") as response:
        html, etag = response.read(), response.headers.get("ETag", "")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{api}") as response:
        api_bytes = len(response.read())
    out: dict[str, Any] = {"page_bytes": len(html), "page_gzip_bytes": len(gzip.compress(html)),
                           "api_bytes": api_bytes}
    for name, path, headers in (("page", page, ""), ("api", api, ""),
                                ("page_revalidated", page, f"If-None-Match: {etag}\r\n")):
        asyncio.run(load(port, path, 50, 1000, headers))  # warm every worker's caches (10 clients left some cold)
        for clients in (1, 50):
            count = max(200, args.requests // 10) if clients == 1 else args.requests
            out[f"{name}_{clients}"] = asyncio.run(load(port, path, clients, count, headers))
    return out


def run(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """Build, serve and measure one database kind; clean up after."""
    with tempfile.TemporaryDirectory(prefix=f"tb-bench-{kind}-") as tmp:
        data_dir = Path(tmp) / "data"
        url = create_database(kind, Path(tmp))
        try:
            started = time.perf_counter()
            phase_id, figures = build(url, data_dir, args)
            figures["build_s"] = time.perf_counter() - started
            process, port = serve(url, data_dir)
            try:
                figures.update(measure(port, phase_id, args))
            finally:
                process.terminate()
                process.wait(timeout=30)
        finally:
            drop_database(kind, url)
    return figures


def report(kind: str, figures: dict[str, Any]) -> None:
    """Print one database's figures as a table."""
    print(f"\n== {kind}: {figures['build_s']:.0f} s to build; board first built in "
          f"{figures['first_board_build_s']:.1f} s, a refresh without change "
          f"{figures['refresh_without_change_ms']:.0f} ms")
    print(f"{'request':<22}{'clients':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'req/s':>8}{'errors':>8}")
    for name in ("page", "api", "page_revalidated"):
        for clients in (1, 50):
            row = figures[f"{name}_{clients}"]
            print(f"{name:<22}{clients:>8}{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}{row['max_ms']:>9.1f}"
                  f"{row['rps']:>8.0f}{row['errors']:>8}")
    print(f"first page: {figures['page_bytes'] / 1024:.1f} KiB HTML ({figures['page_gzip_bytes'] / 1024:.1f} KiB "
          f"gzipped); API first page {figures['api_bytes'] / 1024:.1f} KiB")
    print(f"scoring one 2,000-item file: evaluate p50 {figures['evaluate_p50_ms']:.0f} ms; a whole inline upload "
          f"into the full phase (store, score, record, board refresh) p50 {figures['upload_scored_p50_ms']:.0f} ms")


def main() -> None:
    """Parse arguments, run every database kind, print the tables and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", nargs="+", choices=("sqlite", "postgres"), default=["sqlite", "postgres"])
    parser.add_argument("--submissions", type=int, default=10_000)
    parser.add_argument("--participants", type=int, default=1_000)
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--files", type=int, default=400, help="distinct prediction files scored for real")
    parser.add_argument("--requests", type=int, default=3_000, help="requests per measurement at 50 clients")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    results = {}
    for kind in args.db:
        results[kind] = run(kind, args)
        report(kind, results[kind])
    print(json.dumps({"args": vars(args), "results": results}))


if __name__ == "__main__":
    main()
