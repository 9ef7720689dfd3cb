"""Run ``python -m scoring`` many times and print the histogram of its exit codes.

The command line promises exit 0 (scored or valid), 2 (bad prediction file) or 3 (bad
label file or config), and nothing else. Before it left through ``os._exit``, about 1
run in 1,000 ended with -6 ("terminate called without an active exception": pyarrow's
thread pools racing the interpreter's teardown) after printing a correct answer. A rate
that low needs many runs to see, hence a benchmark rather than a unit test.

The runs cycle through four cases: evaluate a good file (0), validate a good file (0),
validate a bad file (2), evaluate against a bad label file (3). The inputs are written to
a temporary folder; ``--ref`` runs the ``scoring/`` of a git revision instead of the
working tree (e.g. ``--ref 8d32339`` for the code before the fix).

Usage: python bench/cli_exit_bench.py [--runs 1000] [--jobs 2] [--rows 5000] [--ref REV]
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = (  # (name, subcommand, prediction file, label file, expected exit code)
    ("evaluate good", "evaluate", "good.csv", "labels.jsonl", 0),
    ("validate good", "validate", "good.csv", "labels.jsonl", 0),
    ("validate bad", "validate", "bad.csv", "labels.jsonl", 2),
    ("evaluate bad labels", "evaluate", "good.csv", "broken.jsonl", 3),
)


def write_inputs(folder: Path, rows: int) -> None:
    """Write a binary label file, a good and a bad CSV submission, and a broken label file."""
    labels = [{"id": f"q{i}", "label": i % 3 != 0, "category": f"c{i % 7}",
               "popularity": "head" if i % 2 else "tail"} for i in range(rows)]
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    good = ["id,prediction,confidence"] + [f"q{i},{'true' if i % 4 else 'false'},0.{i % 10}" for i in range(rows)]
    (folder / "good.csv").write_text("\n".join(good) + "\n")
    bad = good[:-1] + [f"q{rows - 1},perhaps,0.5"]
    (folder / "bad.csv").write_text("\n".join(bad) + "\n")
    (folder / "broken.jsonl").write_text('{"id": "q0", "label": true}\n{"id": "q1", "label": \n')


def scoring_root(ref: str | None, folder: Path) -> Path:
    """Return the folder whose ``scoring/`` runs: the working tree, or an export of a git revision."""
    if ref is None:
        return ROOT
    archive = subprocess.run(["git", "archive", "--format=tar", ref, "scoring"], cwd=ROOT,
                             capture_output=True, check=True)
    dest = folder / "src"
    dest.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def run_once(index: int, folder: Path, source: Path, python: str) -> tuple[str, int, int, str]:
    """Run case ``index % 4`` once; return its name, expected and actual exit code, and stderr's last line."""
    name, command, predictions, labels, expected = CASES[index % len(CASES)]
    env = {**os.environ, "PYTHONPATH": str(source), "TAILBOARD_CACHE_DIR": str(folder / "cache")}
    done = subprocess.run(
        [python, "-m", "scoring", command, "--labels", str(folder / labels), "--predictions",
         str(folder / predictions)],
        cwd=source, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    tail = (done.stderr.strip().splitlines() or [""])[-1]
    return name, expected, done.returncode, tail


def main() -> int:
    """Run the benchmark and print the histogram; exit 1 when any run ended with an unexpected code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (the machine is shared: keep it small)")
    parser.add_argument("--rows", type=int, default=5000, help="items in the label file")
    parser.add_argument("--ref", help="git revision whose scoring/ to run (default: the working tree)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-exit-bench-") as tmp:
        folder = Path(tmp)
        write_inputs(folder, args.rows)
        source = scoring_root(args.ref, folder)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda i: run_once(i, folder, source, args.python), range(args.runs)))
    return report(results, args, time.monotonic() - started)


def report(results: list[tuple[str, int, int, str]], args: argparse.Namespace, seconds: float) -> int:
    """Print the exit-code histogram overall and per case; return 1 when any code was unexpected."""
    overall = collections.Counter(code for _, _, code, _ in results)
    print(f"{len(results)} runs of python -m scoring ({args.rows} rows, {args.jobs} at once, "
          f"scoring/ from {args.ref or 'the working tree'}) in {seconds:.0f} s")
    print("exit code histogram: " + ", ".join(f"{code}: {n}" for code, n in sorted(overall.items())))
    unexpected = [r for r in results if r[1] != r[2]]
    for name, _, _, _, expected in CASES:
        codes = collections.Counter(code for case, _, code, _ in results if case == name)
        print(f"  {name:<20} expected {expected}: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())))
    for name, expected, code, tail in unexpected[:10]:
        print(f"  unexpected: {name} exited {code} (expected {expected}); stderr ends: {tail!r}")
    print(json.dumps({"runs": len(results), "histogram": {str(c): n for c, n in sorted(overall.items())},
                      "unexpected": len(unexpected)}))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
