"""An independent check of the deadline benchmark's read rows, with wrk instead of our own load generator.

bench/deadline_bench.py drives the server with its own asyncio clients. This script
builds the same instance (bench/deadline/world.py: ``--items`` binary items,
``--submissions`` scored submissions from ``--participants`` participants), serves it with
gunicorn as deployed, and measures the read rows with wrk (Debian's package ``wrk``, a C
load generator: ``apt-get install wrk``), ``--connections`` connections on ``--threads``
threads for ``--duration`` seconds each, wrk's own latency distribution:

- anonymous page and API;
- the page logged in (one participant's session cookie, from the login form) and the API
  with that participant's token;
- distinct search / page-number / sort URLs (a Lua script walks the same URL list the
  deadline bench uses) and junk ``?utm=<n>`` parameters.

Usage: python bench/wrk_check.py [--backend sqlite|postgres] [--submissions 2000] [--duration 15]
wrk opens every connection from 127.0.0.1 and gunicorn closes each after its answer, so
some 3,000 connections a second leave tens of thousands of loopback ports in TIME_WAIT:
run a few rows at a time (``--rows``), a minute apart, or the later rows measure the
kernel's port reuse (``ss -s``). Prints one line per row (p50 / p90 / p99 / max, requests per second, non-2xx answers)
and writes them to ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(BENCH)]

from deadline import reads, servers  # noqa: E402  (bench/deadline and the platform come from the paths above)
from deadline.runner import Cleanup  # noqa: E402
from deadline.site import board_api, board_page, login  # noqa: E402
from deadline.world import Instance, build, create_database, drop_database, platform_env  # noqa: E402

UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def parse_args() -> argparse.Namespace:
    """Return the options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--submissions", type=int, default=2000)
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--rows", nargs="+", default=None, metavar="ROW",
                        help="rows to run (default all): anon_page anon_api login_page token_api distinct junk")
    parser.add_argument("--json", default=str(BENCH / "out" / "wrk_check.json"))
    return parser.parse_args()


def wrk(url: str, args: argparse.Namespace, *, headers: dict[str, str] | None = None,
        script: Path | None = None) -> dict[str, Any]:
    """Run wrk against url; return its latency percentiles (ms), requests per second and non-2xx count."""
    command = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s", "--latency", "--timeout",
               "10s"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    if script is not None:
        command += ["-s", str(script)]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    figures: dict[str, Any] = {}
    for percent, value, unit in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M):
        figures[f"p{percent}_ms"] = round(float(value) * UNIT_MS[unit], 1)
    found = re.search(r"Latency\s+[\d.]+\w+\s+[\d.]+\w+\s+([\d.]+)(us|ms|s|m)", out)
    if found:
        figures["max_ms"] = round(float(found.group(1)) * UNIT_MS[found.group(2)], 1)
    figures["rps"] = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    figures["non_2xx"] = int(bad.group(1)) if bad else 0
    figures["socket_errors"] = sum(int(n) for n in errors.groups()) if errors else 0
    return figures


def lua_paths(paths: list[str], script: Path) -> Path:
    """Write a wrk script that asks for each path in turn (each wrk thread from its own offset)."""
    listed = ",\n".join(json.dumps(p) for p in paths)
    script.write_text(
        "local paths = {\n" + listed + "\n}\nlocal n = 0\n"
        "function setup(thread) n = n + 1; thread:set('offset', n * 7919) end\n"
        "function init(args) i = offset or 0 end\n"
        "function request() i = i + 1; return wrk.format('GET', paths[(i % #paths) + 1]) end\n")
    return script


def read_plan(instance: Instance, port: int, seed: int, folder: Path) -> list[tuple[str, str, dict[str, str],
                                                                                 Path | None]]:
    """Return each row's name, path, headers and wrk script (logging one participant in for the logged-in row)."""
    reader, page, api = instance.readers[0], board_page(instance.phase_id), board_api(instance.phase_id)
    cookie = asyncio.run(login(port, reader, source="127.0.0.1", next_path=page))
    distinct = reads.distinct_urls(instance, seed)
    return [("anon_page", page, {}, None), ("anon_api", api, {}, None),
            ("login_page", page, {"Cookie": cookie}, None),
            ("token_api", api, {"Authorization": f"Bearer {reader.token}"}, None),
            ("distinct", page, {}, lua_paths([next(distinct) for _ in range(20000)], folder / "distinct.lua")),
            ("junk", page, {}, lua_paths([f"{page}?utm={n}" for n in range(20000)], folder / "junk.lua"))]


def main() -> int:
    """Build, serve, measure each row with wrk, print and write the figures; clean up whatever happens."""
    args = parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install wrk", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="tb-wrk-"))
    (folder / "data").mkdir()
    cleanup = Cleanup()
    url = create_database(args.backend, folder)
    cleanup.undo.append(lambda: drop_database(url))
    instance = Instance(args.backend, folder, ROOT, platform_env(ROOT, folder, url), url)
    rows: dict[str, Any] = {}
    try:
        build(instance, Path(sys.executable).parent, types.SimpleNamespace(
            items=args.items, submissions=args.submissions, participants=args.participants, files=args.files,
            clients=args.connections, seed=args.seed, uploaders=2))
        web = servers.start_web(cleanup.processes, bin_dir=Path(sys.executable).parent, source=ROOT,
                                env={**instance.env, "TAILBOARD_SCORING": "inline"}, log=folder / "gunicorn.log")
        base = f"http://127.0.0.1:{web.port}"
        plan = read_plan(instance, web.port, args.seed, folder)
        print(f"{args.backend}: {args.submissions} submissions, {args.connections} connections, "
              f"wrk {args.duration} s a row (gunicorn {web.workers} x {web.threads})", flush=True)
        for name, path, headers, script in plan:
            if args.rows and name not in args.rows:
                continue
            wrk(base + path, types.SimpleNamespace(**{**vars(args), "duration": 3}), headers=headers, script=script)
            rows[name] = wrk(base + path, args, headers=headers, script=script)
            print(f"  {name:<11} {rows[name]}", flush=True)
    finally:
        cleanup.run()
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
