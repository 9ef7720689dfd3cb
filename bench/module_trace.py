"""Count the project modules one submission passes through, from web upload to ranking row.

A newcomer following one submission reads every module its code runs in. This traces
exactly that path with ``sys.setprofile``: a participant uploads a prediction file
through the web form (Flask test client, ``TAILBOARD_SCORING=inline``, so the file is
scored in-process before the response), then the phase's leaderboard page is read.

Only project modules count: ``leaderboard/**.py``, ``scoring/**.py`` and ``app.py``
(templates, Flask, SQLAlchemy, numpy... do not). A call is attributed to the nearest
project frame below it on the stack, so a view called by Flask, or a filter called by
a template, is entered from the project module that started that library call.

Printed numbers:

- ``modules``: distinct project modules in which some function ran;
- ``hops``: distinct ordered pairs (caller module -> callee module) of a call from a
  function in one project module to a function in another: the edges a reader follows;
- ``transitions``: every such cross-module call, counted each time it happens;
- ``entered``: per module, through how many distinct doors control came into it from
  another module (or from outside the project: Flask calling a view): distinct (caller module,
  callee function) pairs, i.e. how often a
  reader following the path lands there again from somewhere else (the raw number of
  cross-module calls into it is shown beside it).

Everything is set up before tracing starts, through the stable outside interfaces
(the ``flask`` CLI commands of docs/CLI.md and the login form), and one identical upload is
made first by another participant, so imports, template compilation and caches are warm
and only the steady-state path is counted. Module-level code (``<module>``) is ignored.

Usage: python bench/module_trace.py [--json] [--calls]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PACKAGES = ("leaderboard", "scoring")
PASSWORD = "trace-password-1"
N_ITEMS = 60
OUTSIDE = "(outside the project)"


def module_of(filename: str, cache: dict[str, str | None]) -> str | None:
    """Return the dotted project module of a code file name, or None outside the project."""
    if filename in cache:
        return cache[filename]
    name: str | None = None
    path = Path(filename)
    if path.suffix == ".py" and path.is_absolute():
        try:
            relative = path.resolve().relative_to(ROOT)
        except ValueError:
            relative = None
        if relative is not None and (relative.parts[0] in PACKAGES or relative.as_posix() == "app.py"):
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
    cache[filename] = name
    return name


class Tracer:
    """A profile function recording cross-module calls between project modules."""

    def __init__(self) -> None:
        self.cache: dict[str, str | None] = {}
        self.modules: set[str] = set()
        self.entered: collections.Counter[str] = collections.Counter()  # raw cross-module calls in
        self.pairs: collections.Counter[tuple[str, str]] = collections.Counter()
        self.calls: list[tuple[str, str, str]] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>":
            return
        callee = module_of(frame.f_code.co_filename, self.cache)
        if callee is None:
            return
        self.modules.add(callee)
        caller = self._caller(frame.f_back)
        if caller == callee:
            return
        self.entered[callee] += 1
        self.calls.append((caller or OUTSIDE, callee, frame.f_code.co_qualname))
        if caller is not None:
            self.pairs[(caller, callee)] += 1

    def _caller(self, frame: FrameType | None) -> str | None:
        """Return the project module of the nearest project frame at or below frame."""
        while frame is not None:
            module = module_of(frame.f_code.co_filename, self.cache)
            if module is not None and frame.f_code.co_name != "<module>":
                return module
            frame = frame.f_back
        return None


def labels_jsonl() -> bytes:
    """Return a binary label file: categories, head/tail popularity, a private split."""
    lines = []
    for n in range(N_ITEMS):
        record = {"id": f"i{n:03d}", "label": "true" if n % 3 else "false",
                  "category": ("science", "history", "sport")[n % 3],
                  "popularity": "head" if n % 2 else "tail", "split": "private" if n % 4 == 3 else "public"}
        lines.append(json.dumps(record))
    return ("\n".join(lines) + "\n").encode()


def predictions_csv(wrong_every: int) -> bytes:
    """Return a CSV answering every item, wrong on every wrong_every-th one."""
    rows = ["id,prediction"]
    for n in range(N_ITEMS):
        truth = bool(n % 3)
        rows.append(f"i{n:03d},{str(truth != (n % wrong_every == 0)).lower()}")
    return ("\n".join(rows) + "\n").encode()


def cli(runner: Any, *args: str) -> str:
    """Run a flask CLI command of the app; return its last output line (the id)."""
    result = runner.invoke(args=list(args))
    if result.exit_code != 0:
        raise RuntimeError(f"flask {' '.join(args)} failed: {result.output}{result.exception!r}")
    return result.output.strip().splitlines()[-1]


def csrf(client: Any, path: str) -> str:
    """Return the CSRF token of the form on the page at path."""
    page = client.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page) or re.search(
        r'value="([^"]+)"[^>]*name="csrf_token"', page)
    if not found:
        raise RuntimeError(f"no csrf_token on {path}")
    return found.group(1)


def logged_in_client(app: Any, email: str) -> Any:
    """Return a test client logged in through the login form."""
    client = app.test_client()
    response = client.post("/login", data={"email": email, "password": PASSWORD, "csrf_token": csrf(client, "/login")})
    if response.status_code not in (302, 303):
        raise RuntimeError(f"login of {email} answered {response.status_code}")
    return client


def upload(client: Any, phase_id: str, data: bytes) -> None:
    """Upload a prediction file through the phase page's form; it must be accepted (303)."""
    import io

    form = {"csrf_token": csrf(client, f"/phases/{phase_id}"), "description": "trace",
            "file": (io.BytesIO(data), "predictions.csv")}
    response = client.post(f"/phases/{phase_id}", data=form, content_type="multipart/form-data")
    if response.status_code != 303:
        raise RuntimeError(f"upload answered {response.status_code}: {response.get_data(as_text=True)[:500]}")


def build_app(tmp: Path) -> Any:
    """Return an app on a fresh SQLite database under tmp, with inline scoring."""
    import dataclasses

    from sqlalchemy import create_engine

    from leaderboard import create_app, models  # noqa: F401  (registers the tables on Base.metadata)
    from leaderboard.platform import Settings
    from leaderboard.platform.db import Base

    url = f"sqlite:///{tmp / 'trace.sqlite3'}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    settings = Settings.from_env({}, data_dir=tmp / "data", labels_dir=tmp / "labels", database_url=url,
                                 storage_url="local", secret_key="trace", scoring_mode="inline",
                                 ratelimit_storage_uri="memory://", testing=True)
    return create_app(dataclasses.asdict(settings))


def trace() -> Tracer:
    """Set up an open phase and two participants, warm up, then trace one upload and one leaderboard read."""
    with tempfile.TemporaryDirectory(prefix="tailboard-trace-") as name:
        tmp = Path(name)
        app = build_app(tmp)
        runner = app.test_cli_runner()
        (tmp / "labels.jsonl").write_bytes(labels_jsonl())
        (tmp / "phase.json").write_text(json.dumps({"task_type": "binary", "primary_metric": "accuracy",
                                                    "breakdowns": ["category"], "min_slice_items": 5}))
        cli(runner, "competitions", "create", "trace", "--title", "Trace")
        phase_id = cli(runner, "phases", "create", "trace", "--name", "Traced", "--labels",
                       str(tmp / "labels.jsonl"), "--config", str(tmp / "phase.json"))
        cli(runner, "phases", "open", phase_id)
        for who in ("warm", "traced"):
            cli(runner, "users", "create", f"{who}@example.org", "--password", PASSWORD, "--name", who)
        warm, traced = logged_in_client(app, "warm@example.org"), logged_in_client(app, "traced@example.org")
        upload(warm, phase_id, predictions_csv(5))
        warm.get(f"/phases/{phase_id}/leaderboard")
        form = {"csrf_token": csrf(traced, f"/phases/{phase_id}"), "description": "trace"}
        data = predictions_csv(7)

        import io

        tracer = Tracer()
        sys.setprofile(tracer)
        try:
            response = traced.post(f"/phases/{phase_id}", data={**form, "file": (io.BytesIO(data), "p.csv")},
                                   content_type="multipart/form-data")
            board = traced.get(f"/phases/{phase_id}/leaderboard")
        finally:
            sys.setprofile(None)
        if response.status_code != 303 or board.status_code != 200 or "traced" not in board.get_data(as_text=True):
            raise RuntimeError(f"the traced path did not go through: upload {response.status_code}, "
                               f"leaderboard {board.status_code}")
        app.extensions["tailboard"].engine.dispose()
        return tracer


def package(module: str) -> str:
    """Return the top-level package of a project module ('app' for app.py)."""
    return module.split(".")[0]


def by_package(tracer: Tracer) -> dict[str, int]:
    """Return modules per package and hops within and between packages (e.g. 'leaderboard->scoring hops')."""
    counts: collections.Counter[str] = collections.Counter(f"{package(m)} modules" for m in tracer.modules)
    for caller, callee in tracer.pairs:
        ends = (package(caller), package(callee))
        counts[f"{ends[0]} hops" if ends[0] == ends[1] else f"{ends[0]}->{ends[1]} hops"] += 1
    return dict(sorted(counts.items()))


def main() -> None:
    """Trace and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--calls", action="store_true", help="also list every cross-module call in order")
    args = parser.parse_args()
    tracer = trace()
    doors = collections.Counter(callee for _, callee, _ in set(tracer.calls))
    summary = {
        "modules": len(tracer.modules),
        "hops": len(tracer.pairs),
        "transitions": sum(tracer.pairs.values()),
        "by_package": by_package(tracer),
        "entered": {module: doors[module] for module in sorted(tracer.modules, key=lambda m: (-doors[m], m))},
        "pairs": {f"{a} -> {b}": n for (a, b), n in sorted(tracer.pairs.items())},
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"modules: {summary['modules']}  hops (distinct module pairs): {summary['hops']}  "
          f"transitions (cross-module calls): {summary['transitions']}")
    print("by package:", "  ".join(f"{name} {count}" for name, count in by_package(tracer).items()))
    print("entered (distinct doors; raw cross-module calls in brackets):")
    for module, count in summary["entered"].items():
        print(f"  {count:4d}  [{tracer.entered[module]:4d}]  {module}")
    print("hops:")
    for (caller, callee), count in sorted(tracer.pairs.items()):
        print(f"  {caller} -> {callee}  ({count})")
    if args.calls:
        print("calls:")
        for caller, callee, qualname in tracer.calls:
            print(f"  {caller} -> {callee}.{qualname}")


if __name__ == "__main__":
    main()
