"""One backend's run: build the instance, serve it embedded then with Celery, measure the selected rows.

Embedded (``TAILBOARD_SCORING=inline``, as deploy/env.example ships): the read rows, the
upload row, the rescore row, embedded fairness, then the embedded kill (last: it leaves a
killed worker's job behind). Then the same gunicorn in Celery mode on a Redis database of
its own, a worker with one pool process and beat, as deploy/README.md runs them: Celery
fairness and queue visibility (the worker starts only once the flood is queued), then
the Celery kill. Everything started is stopped, and the database dropped, by the caller's
``Cleanup`` whatever happens.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deadline import platform_api, reads, servers
from deadline.jobs import kill_embedded_row, rescore_row
from deadline.scorers import fairness_row, kill_celery_row
from deadline.uploads import uploads_row
from deadline.world import Instance, build, create_database, drop_database, platform_env

from leaderboard.workers.scorer import SQLITE_THREADS, THREADS

READ_ROWS = ("anon", "logged_in", "token", "distinct", "junk")
ROWS = (*READ_ROWS, "uploads", "rescore", "fairness", "queue", "kill")


class Cleanup:
    """What to undo when the run ends: processes started, databases made, broker databases used."""

    def __init__(self) -> None:
        self.processes = servers.Processes()
        self.undo: list[Callable[[], None]] = []

    def run(self) -> None:
        """Stop every process, then undo everything else, newest first; report failures and go on."""
        self.processes.stop_all()
        while self.undo:
            step = self.undo.pop()
            try:
                step()
            except Exception as error:  # cleaning up the rest matters more than this one
                print(f"cleanup step failed: {type(error).__name__}: {error}")


def run_backend(backend: str, args: Any, results: dict[str, Any], *, source: Path, bin_dir: Path, folder: Path,
                cleanup: Cleanup) -> None:
    """Build and measure one backend, filling results row by row (a failure keeps what was measured)."""
    (folder / "data").mkdir(parents=True)
    url = create_database(backend, folder)
    if not args.keep:  # --keep keeps a PostgreSQL database too (its URL is in the run folder's env)
        cleanup.undo.append(lambda: drop_database(url))
    else:
        (folder / "database_url").write_text(url + "\n")
    instance = Instance(backend, folder, source, platform_env(source, folder, url), url)
    print(f"\n-- {backend}: building {args.submissions} scored submissions from {args.participants} participants "
          f"on {args.items} items ({folder})", flush=True)
    began = time.perf_counter()
    build(instance, bin_dir, args)
    results.update(build={**instance.figures, "total_s": round(time.perf_counter() - began, 1)},
                   size=f"{args.items} items, {args.submissions} submissions, {args.participants} participants, "
                        f"{args.clients} clients",
                   sizes={"clients": args.clients, "upload_rate": args.upload_rate, "duration": args.duration,
                          "rescore_read_rate": args.rescore_read_rate, "flood": args.flood})
    print(f"   built in {results['build']['total_s']} s: {instance.figures}", flush=True)
    embedded(instance, args, results, bin_dir=bin_dir, cleanup=cleanup)
    if args.celery and ({"fairness", "queue", "kill"} & args.rows):
        with_celery(instance, args, results, bin_dir=bin_dir, cleanup=cleanup)


def embedded(instance: Instance, args: Any, results: dict[str, Any], *, bin_dir: Path, cleanup: Cleanup) -> None:
    """Serve the instance embedded and measure the rows that run there."""
    env = {**instance.env, "TAILBOARD_SCORING": "inline"}
    web = servers.start_web(cleanup.processes, bin_dir=bin_dir, source=instance.source, env=env,
                            log=instance.folder / "gunicorn-embedded.log")
    results["server"] = {"workers": web.workers, "threads": web.threads, "processes": len(web.pids())}
    print(f"   gunicorn (embedded) on port {web.port}: {web.workers} workers x {web.threads} threads", flush=True)
    cookies: list[str] = []
    if {"logged_in", "uploads", "rescore"} & args.rows:
        cookies = asyncio.run(reads.log_in_readers(web.port, instance, args.clients))
    results.update(reads.read_rows(web.port, instance, args, args.rows, cookies, web.pids))
    if "uploads" in args.rows:
        results["uploads"] = uploads_row(web.port, instance, args, cookies, web.pids)
    if "rescore" in args.rows:
        results["rescore"] = rescore_row(web.port, instance, args, cookies, web.pids)
        results["rescore_saturated"] = rescore_row(web.port, instance, args, cookies, web.pids, saturated=True)
    extras = instance.uploaders[-6:]
    if {"fairness", "queue"} & args.rows:
        slots = int(web.workers) * (SQLITE_THREADS if instance.backend == "sqlite" else THREADS)  # scorer threads
        results["fairness_embedded"] = {**fairness_row(web.port, instance, extras[0], extras[1], args),
                                        "slots": slots}
    if "kill" in args.rows:
        results["kill_embedded"] = kill_embedded_row(web, instance, args)
    cleanup.processes.stop(web.process)


def with_celery(instance: Instance, args: Any, results: dict[str, Any], *, bin_dir: Path, cleanup: Cleanup) -> None:
    """Serve the instance with Celery scoring and measure fairness, queue visibility and the Celery kill."""
    db = servers.free_redis_db()
    cleanup.undo.append(lambda: servers.flush_redis_db(db))
    env = {**instance.env, "TAILBOARD_SCORING": "celery", "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{db}"}
    web = servers.start_web(cleanup.processes, bin_dir=bin_dir, source=instance.source, env=env,
                            log=instance.folder / "gunicorn-celery.log")
    module = platform_api.celery_app_module()
    results["celery"] = {"app": module, "broker_db": db, "concurrency": 1}
    print(f"   gunicorn (celery) on port {web.port}; celery -A {module}, Redis db {db}", flush=True)
    worker: list[subprocess.Popen[bytes]] = []

    def start_worker() -> None:
        worker.append(servers.start_celery(cleanup.processes, bin_dir=bin_dir, source=instance.source, env=env,
                                           module=module, folder=instance.folder, role="worker"))

    extras = instance.uploaders[-6:]
    if {"fairness", "queue"} & args.rows:
        results["fairness_celery"] = fairness_row(web.port, instance, extras[2], extras[3], args,
                                                  before_scoring=start_worker)
    if "kill" in args.rows:
        if not worker:
            start_worker()
        servers.start_celery(cleanup.processes, bin_dir=bin_dir, source=instance.source, env=env, module=module,
                             folder=instance.folder, role="beat")
        results["kill_celery"] = kill_celery_row(web.port, instance, worker[0], extras[4], args)
    cleanup.processes.stop_all()
