"""Deadline benchmark (issue 19 item 8): every row of the issue's table, on SQLite and PostgreSQL, as deployed.

For each backend it builds a fresh instance (a SQLite file, or a throwaway PostgreSQL
database at 127.0.0.1:5432): the organizer, competition and an open phase of ``--items``
binary items made with ``flask --app app`` commands, then ``--submissions`` scored
submissions from ``--participants`` participants written in bulk (bench/deadline/world.py).
It serves the instance with gunicorn and deploy/gunicorn.conf.py (workers and threads as
deployed, or WEB_CONCURRENCY / GUNICORN_THREADS from this shell) and drives it over HTTP
with ``--clients`` clients, each from its own loopback address:

- reads: anonymous page and API; the page logged in (each client its own session, made
  through the login form, a participant with rows); the API with a participant's token;
  distinct search / page-number / sort URLs; junk ``?utm=<random>`` parameters;
- reads while ``--upload-rate`` real multipart uploads a second arrive for ``--duration`` s,
  and those uploads (statuses, 500 bodies, time to 202, time until on the board);
- a rescore of every submission started through the API, with reads beside it;
- a scorer killed with SIGKILL mid-run: the gunicorn worker holding an embedded rescore
  job, and the Celery pool process scoring a submission (Redis at 127.0.0.1:6379);
- fairness of one scoring slot (40 uploads from one owner, then one from another) and
  whether a queued submission shows ``queue_position`` / ``eta_seconds``.

Each load row states what the load generator itself cost (its CPU time over the wall
time, against the machine's busy share from /proc/stat): it shares the cores with the
server and the database. Prints issue 19's table with PASS/FAIL per row and writes every
raw figure to ``--json``. Servers, workers, databases and the Redis broker database are
cleaned up on exit, Ctrl-C included.

Usage: python bench/deadline_bench.py [--backend sqlite|postgres|both] [--quick] [--rows reads uploads ...]
       [--submissions 2000] [--clients 50] [--duration 60] [--source worktree|REV] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
ROW_NAMES = ("anon", "logged_in", "token", "distinct", "junk", "uploads", "rescore", "fairness", "queue", "kill")
QUICK = {"items": 300, "submissions": 200, "participants": 100, "files": 20, "clients": 10, "requests": 200,
         "duration": 10, "board_wait": 60, "rescore_max": 60, "kill_wait": 70, "flood": 10, "fair_wait": 120}
FULL = {"items": 2000, "submissions": 2000, "participants": 1000, "files": 200, "clients": 50, "requests": 2000,
        "duration": 60, "board_wait": 200, "rescore_max": 900, "kill_wait": 200, "flood": 40, "fair_wait": 600}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Return the options, with --quick or full sizes filled in where not given."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run: " + ", ".join(
        f"{k}={v}" for k, v in QUICK.items()))
    parser.add_argument("--rows", nargs="+", default=["all"], metavar="ROW",
                        help=f"rows to run: all, reads (the first five), or any of {', '.join(ROW_NAMES)}")
    parser.add_argument("--no-celery", dest="celery", action="store_false",
                        help="skip the Celery half (fairness, queue and kill rows then run embedded only)")
    for name, default in FULL.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int if isinstance(default, int) else float,
                            default=None, help=f"default {default} (--quick: {QUICK[name]})")
    parser.add_argument("--upload-rate", type=float, default=2.0, help="uploads per second in the upload row")
    parser.add_argument("--rescore-read-rate", type=float, default=200.0,
                        help="reads per second (paced) beside the rescore row; 0 for closed-loop")
    parser.add_argument("--upload-timeout", type=float, default=120.0, help="seconds an upload may take")
    parser.add_argument("--board-poll", type=float, default=1.0, help="seconds between whole-board reads")
    parser.add_argument("--uploaders", type=int, default=None, help="fresh participants (default: uploads + 6)")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--source", default="worktree",
                        help="the platform to run: the working tree, or a git revision exported into the run folder")
    parser.add_argument("--workdir", default=tempfile.gettempdir(), help="where the run folder is made")
    parser.add_argument("--keep", action="store_true",
                        help="keep the run folder (logs, SQLite files) and the PostgreSQL database")
    parser.add_argument("--json", default=str(BENCH / "out" / "deadline_bench.json"), help="raw figures go here")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.uploaders = args.uploaders or int(round(args.upload_rate * args.duration)) + 6
    args.rows = chosen_rows(parser, args.rows)
    return args


def chosen_rows(parser: argparse.ArgumentParser, asked: list[str]) -> set[str]:
    """Return the rows named by --rows ("all" and "reads" expanded); an unknown name is a usage error."""
    rows = set(asked)
    if "all" in rows:
        rows |= set(ROW_NAMES)
    if "reads" in rows:
        rows |= set(ROW_NAMES[:5])
    unknown = rows - set(ROW_NAMES) - {"all", "reads"}
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}; choose from all, reads, {', '.join(ROW_NAMES)}")
    return rows & set(ROW_NAMES)


def prepare_source(spec: str, folder: Path) -> Path:
    """Return the tree to run: the checkout itself, or the revision's files exported into folder/src."""
    if spec == "worktree":
        return ROOT
    target = folder / "src"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", spec], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def machine() -> dict[str, Any]:
    """Return the machine's cores and load averages."""
    return {"cores": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def main() -> int:
    """Run every selected backend, print the tables and write the JSON; clean up whatever happens."""
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanup on `kill` too
    folder = Path(tempfile.mkdtemp(prefix="tb-deadline-", dir=args.workdir))
    source = prepare_source(args.source, folder)
    sys.path[:0] = [str(source), str(BENCH)]  # the platform and scoring of the chosen tree, then bench/deadline
    runner = importlib.import_module("deadline.runner")  # imported only now: it imports that tree's scoring
    report = importlib.import_module("deadline.report")
    cleanup = runner.Cleanup()
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    out: dict[str, Any] = {"args": {k: sorted(v) if isinstance(v, set) else v for k, v in vars(args).items()},
                           "source": str(source), "machine_before": machine(), "results": {}, "table": {}}
    started = time.time()
    try:
        for backend in backends:
            results = out["results"].setdefault(backend, {})
            try:
                runner.run_backend(backend, args, results, source=source, bin_dir=Path(sys.executable).parent,
                                   folder=folder / backend, cleanup=cleanup)
            except Exception:  # the other backend still runs; the table shows what this one measured
                results["error"] = traceback.format_exc()
                print(results["error"], file=sys.stderr)
            cleanup.run()
    finally:
        cleanup.run()
        out["machine_after"], out["seconds"] = machine(), round(time.time() - started, 1)
        for backend, results in out["results"].items():
            out["table"][backend] = report.print_table(backend, results)
        report.print_summary(out["table"])
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
        print(f"\nraw figures: {args.json}; load average before {out['machine_before']['load_average']}, after "
              f"{out['machine_after']['load_average']}; {out['seconds']} s")
        if args.keep:
            print(f"run folder kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
