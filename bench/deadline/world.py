"""Build the deadline phase: a throwaway database, the organizer's setup through the CLI, people and scores in bulk.

The organizer, the competition and the phase are made with ``flask --app app`` commands as
an operator would; the database is migrated with ``alembic upgrade head`` (the release
step). Thousands of participants and scored submissions are written in bulk through
platform_api (distinct prediction files scored for real, their results stored for every
submission), then announced to the board once, as bench/platform_bench.py does.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from deadline import platform_api
from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from scoring import read_predictions
from scoring.correctness import item_correctness

PG_ADMIN = os.environ.get("TAILBOARD_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
PASSWORD = "deadline-bench-pass"
VIEWS = [{"name": "Overall", "metric": "accuracy",
          "columns": ["answer_rate", "popularity.head.accuracy", "popularity.tail.accuracy"]},
         {"name": "Long tail", "metric": "popularity.tail.accuracy", "columns": ["popularity.tail.answer_rate"]}]
MODELS = ("llama-3-8b", "mistral-7b", "gpt-4o", "qwen2-72b", "olmo-7b")


@dataclass(frozen=True)
class Person:
    """A participant the load generator acts as."""

    user_id: int
    email: str
    name: str
    token: str


@dataclass
class Instance:
    """One built instance: where it lives, who is in it, and its phase."""

    backend: str
    folder: Path
    source: Path
    env: dict[str, str]
    database_url: str
    phase_id: int = 0
    organizer_token: str = ""
    readers: list[Person] = field(default_factory=list)  # participants with rows on the board
    uploaders: list[Person] = field(default_factory=list)  # fresh participants, no rows yet
    ids: list[str] = field(default_factory=list)
    gold: Any = None  # the labels' answers, to write plausible prediction files
    figures: dict[str, float] = field(default_factory=dict)


def label_file(items: int, rng: np.random.Generator) -> bytes:
    """Return a binary label file: 20 categories, head/torso/tail, a 30% private split."""
    lines = [json.dumps({"id": f"q{i:05d}", "label": bool(rng.random() < 0.5), "category": f"cat{i % 20:02d}",
                         "popularity": ("head", "torso", "tail")[int(rng.integers(0, 3))],
                         "split": "private" if rng.random() < 0.3 else "public"}) for i in range(items)]
    return ("\n".join(lines) + "\n").encode()


def prediction_file(ids: list[str], gold: np.ndarray, rng: np.random.Generator) -> bytes:
    """Return a prediction CSV right on a random share of items, with about 3% abstentions."""
    right = rng.random(len(ids)) < rng.uniform(0.5, 0.92)
    answers = np.where(right, gold, ~gold)
    skip = rng.random(len(ids)) < 0.03
    rows = ["id,prediction"] + [f"{i}," if s else f"{i},{'true' if a else 'false'}"
                                for i, a, s in zip(ids, answers, skip, strict=True)]
    return ("\n".join(rows) + "\n").encode()


def create_database(backend: str, folder: Path) -> str:
    """Return the URL of a new empty database: a SQLite file in folder, or a throwaway PostgreSQL database."""
    if backend == "sqlite":
        return f"sqlite:///{folder / 'data' / 'tailboard.sqlite3'}"
    name = f"tb_deadline_{os.getpid()}_{int(time.time())}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    """Drop a throwaway PostgreSQL database, closing its connections (SQLite files go with the folder)."""
    if not url.startswith("postgresql"):
        return
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    admin.dispose()


def platform_env(source: Path, folder: Path, url: str) -> dict[str, str]:
    """Return the environment of every platform process: this shell's, minus Tailboard settings, plus the instance's.

    WEB_CONCURRENCY and GUNICORN_THREADS are kept (the operator's choice, as deployed); the
    API rate limit is raised so 50 clients from one token or address measure latency, not 429s.
    """
    keep = ("WEB_CONCURRENCY", "GUNICORN_THREADS")
    env = {k: v for k, v in os.environ.items()
           if k in keep or not k.startswith(("TAILBOARD_", "GUNICORN_", "DATABASE_URL", "CELERY_", "SECRET_KEY",
                                              "RATELIMIT_", "WEB_CONCURRENCY"))}
    env.update({"PYTHONPATH": str(source), "TAILBOARD_DATA_DIR": str(folder / "data"), "DATABASE_URL": url,
                "SECRET_KEY": "deadline-bench", "TAILBOARD_CACHE_DIR": str(folder / "cache"),
                "TAILBOARD_API_RATELIMIT": "1000000 per minute"})
    return env


def run_tool(instance: Instance, *args: str) -> str:
    """Run a platform command (flask, alembic) in the source tree; return its last output line."""
    done = subprocess.run(args, cwd=instance.source, env=instance.env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if lines else ""


def setup_phase(instance: Instance, bin_dir: Path, args: Any, labels: bytes) -> None:
    """Migrate, then create the organizer, a token, the competition and the phase (open since 2020) with the CLI."""
    flask = [str(bin_dir / "flask"), "--app", "app"]
    run_tool(instance, str(bin_dir / "alembic"), "upgrade", "head")
    (instance.folder / "labels.jsonl").write_bytes(labels)
    (instance.folder / "phase.json").write_text(json.dumps({"task_type": "binary", "views": VIEWS}))
    run_tool(instance, *flask, "users", "create", "org@bench.example", "--password", PASSWORD, "--organizer",
             "--name", "Organizer")
    instance.organizer_token = run_tool(instance, *flask, "tokens", "create", "org@bench.example")
    run_tool(instance, *flask, "competitions", "create", "deadline", "--title", "Deadline bench",
             "--owner", "org@bench.example")
    instance.phase_id = int(run_tool(instance, *flask, "phases", "create", "deadline", "--name", "Last day",
                                     "--labels", str(instance.folder / "labels.jsonl"), "--config",
                                     str(instance.folder / "phase.json"), "--max-per-day", "unlimited",
                                     "--start", "2020-01-01T00:00:00Z"))


def build(instance: Instance, bin_dir: Path, args: Any) -> None:
    """Create the whole instance: phase by CLI, people and scored submissions in bulk, the board built once."""
    rng = np.random.default_rng(args.seed)
    labels = label_file(args.items, rng)
    rows = [json.loads(line) for line in labels.splitlines()]
    instance.ids, instance.gold = [r["id"] for r in rows], np.array([r["label"] for r in rows])
    started = time.perf_counter()
    setup_phase(instance, bin_dir, args, labels)
    instance.figures["cli_setup_s"] = time.perf_counter() - started
    runtime = platform_api.runtime(data_dir=str(instance.folder / "data"), database_url=instance.database_url)
    try:
        with runtime.sessions() as session:
            ctx = runtime.context(session)
            started = time.perf_counter()
            users = add_people(ctx, instance, args)
            fill(ctx, instance, users, args, rng)
            instance.figures["bulk_fill_s"] = time.perf_counter() - started
            started = time.perf_counter()
            platform_api.announce_board(ctx, instance.phase_id)
            instance.figures["first_board_build_s"] = time.perf_counter() - started
    finally:
        runtime.engine.dispose()
    settle(instance)


def settle(instance: Instance) -> None:
    """Let PostgreSQL catch up on the bulk fill (VACUUM ANALYZE), as weeks of autovacuum would have.

    Rows written in seconds leave autovacuum work that would otherwise run during the
    first measured rows, on the same two cores; a board that grew over weeks has none.
    """
    if not instance.database_url.startswith("postgresql"):
        return
    started = time.perf_counter()
    engine = create_engine(instance.database_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with engine.connect() as connection:
        connection.execute(text("VACUUM ANALYZE"))
    engine.dispose()
    instance.figures["vacuum_analyze_s"] = time.perf_counter() - started


def add_people(ctx: Any, instance: Instance, args: Any) -> list[int]:
    """Insert the participants in bulk (all with one password), tokens for readers and uploaders; return user ids."""
    user_model, _, _ = platform_api.models()
    template = platform_api.register_user(ctx, email="template@bench.example", password=PASSWORD)
    now = platform_api.utcnow()
    people = [(f"p{n}@bench.example", f"Participant {n:04d}") for n in range(args.participants)]
    people += [(f"late{n}@bench.example", f"Late {n:04d}") for n in range(args.uploaders)]
    ids = list(ctx.session.scalars(insert(user_model).returning(user_model.id), [
        {"email": email, "display_name": name, "password_hash": template.password_hash, "created_at": now}
        for email, name in people]))
    ctx.session.commit()
    for n, (user_id, (email, name)) in enumerate(zip(ids, people, strict=True)):
        late = n >= args.participants
        if late or n < args.clients:
            token = platform_api.create_token(ctx, user=ctx.session.get(user_model, user_id))
            (instance.uploaders if late else instance.readers).append(Person(user_id, email, name, token))
    return ids[:args.participants]


def fill(ctx: Any, instance: Instance, users: list[int], args: Any, rng: np.random.Generator) -> None:
    """Insert scored submissions in bulk from --files distinct files scored for real, two per participant.

    Each score is stored as a scoring run stores it: with its slice list where the tree keeps them.
    """
    _, submission_model, score_model = platform_api.models()
    phase, labels = platform_api.phase_labels(ctx, instance.phase_id)
    made = []
    for _ in range(args.files):
        data = prediction_file(instance.ids, instance.gold, rng)
        predictions = read_predictions(data, labels)
        evaluated, tables = platform_api.evaluated(labels, predictions)
        results, (public, private) = platform_api.stored_results(evaluated, predictions, phase.primary_metric)
        correct, answered = item_correctness(labels, predictions).packed()
        made.append((platform_api.store_file(ctx, phase_id=instance.phase_id, data=data), results, public, private,
                     correct, answered, {} if tables is None else {"slice_tables": tables}))
    start = platform_api.utcnow() - timedelta(days=3)
    for begin in range(0, args.submissions, 500):
        numbers = range(begin, min(args.submissions, begin + 500))
        ids = ctx.session.scalars(insert(submission_model).returning(submission_model.id),
                                  [_submission_row(instance.phase_id, users, n, made[n % args.files][0], start)
                                   for n in numbers]).all()
        ctx.session.execute(insert(score_model), [
            {"submission_id": sid, "label_version": 1, "results": made[n % args.files][1],
             "public_primary": made[n % args.files][2], "private_primary": made[n % args.files][3],
             "correct_bits": made[n % args.files][4], "answered_bits": made[n % args.files][5],
             **made[n % args.files][6], "created_at": start + timedelta(seconds=n)}
            for n, sid in zip(numbers, ids, strict=True)])
        ctx.session.commit()


def _submission_row(phase_id: int, users: list[int], n: int, stored: Any, start: Any) -> dict[str, Any]:
    """Return the columns of bulk submission n: participant n % len(users), some with a second method and metadata."""
    user = n % len(users)
    second = user % 5 == 0 and n // len(users) % 2 == 1
    meta = ({"model": MODELS[user % len(MODELS)], "open_weights": user % 3 != 0, "parameters_b": 7 + user % 65,
             "prompting": "few-shot" if second else "zero-shot"} if user % 4 == 0 else None)
    at = start + timedelta(seconds=n)
    return {"phase_id": phase_id, "user_id": users[user], "description": "", "filename": "p.csv",
            "file_key": stored.key, "file_sha256": stored.sha256, "file_size": stored.size, "status": "scored",
            "quota_day": "2026-01-01", "method": "cot" if second else "default", "entry_metadata": meta,
            "selected": False, "attempts": 0, "is_baseline": False, "created_at": at, "updated_at": at}
