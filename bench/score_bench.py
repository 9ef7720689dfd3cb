"""Benchmark ``python -m scoring evaluate`` against a pandas + scikit-learn scoring program.

Generates (once per seed and size, into bench/out/, git-ignored) a hidden label
file of 1,000,000 binary items with 20 Zipf-distributed categories (5% of items in
two categories) and head/tail popularity, a phase config, and a CSV submission with
mixed-case tokens, abstentions, missing ids and a confidence column. Then runs the
programs as whole processes, in turn, and reports the median wall time and the
median peak RSS (from ``os.wait4``) of each, their ratios, and whether they agree
on the numbers they compute. Ours runs twice per round: ``warm`` with the parsed
labels already in its label cache (the platform's steady state: one label version,
many submissions) and ``cold`` with an empty cache directory each time (parse, then
write the cache).

Usage: python bench/score_bench.py [--rows N] [--runs N] [--seed S] [--out DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_data import Dataset, generate

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "bench" / "baseline_pandas_sklearn.py"
AGREEMENT_TOLERANCE = 1e-9
TARGET_SPEEDUP = 10.0
TARGET_MEMORY_RATIO = 1 / 3


@dataclass
class Runs:
    """Wall times (s), CPU times (s), peak RSS (MiB) and the last stdout/stderr of one program."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""


def child_env(name: str, scratch: Path) -> tuple[dict[str, str], Path | None]:
    """Return the environment of one run, and a directory to delete after it (cold runs).

    ``cold``: a fresh, empty label cache; ``warm``: the bench's own cache, primed
    before timing; the baseline: unchanged.
    """
    env = dict(os.environ)
    env.pop("TAILBOARD_LABEL_CACHE", None)
    if name == "cold":
        fresh = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=scratch))
        env["TAILBOARD_CACHE_DIR"] = str(fresh)
        return env, fresh
    if name == "warm":
        env["TAILBOARD_CACHE_DIR"] = str(scratch / "label-cache")
    return env, None


def run_child(cmd: list[str], runs: Runs, scratch: Path, cwd: Path, *, timed: bool, name: str = "") -> None:
    """Run ``cmd`` once in ``cwd``; keep its output and, if ``timed``, its wall time, CPU time and peak RSS."""
    out_path, err_path = scratch / "child.out", scratch / "child.err"
    env, remove = child_env(name, scratch)
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
    if remove is not None:
        shutil.rmtree(remove, ignore_errors=True)
    child.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen from waiting
    runs.stdout, runs.stderr = out_path.read_text(), err_path.read_text()
    if child.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {child.returncode}:\n{runs.stderr[-3000:]}\n{runs.stdout[-2000:]}")
    if timed:
        runs.wall.append(wall)
        runs.cpu.append(usage.ru_utime + usage.ru_stime)  # less sensitive than wall time to a busy machine
        runs.rss.append(usage.ru_maxrss / 1024)  # KiB on Linux


def git(*args: str) -> str:
    """Return the stripped output of a git command run in the repository."""
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def scoring_source(ref: str, scratch: Path) -> tuple[Path, str]:
    """Return the directory to run ``-m scoring`` from, and a description of that code.

    ``worktree`` is the checkout as it is; any other value is a git revision whose
    ``scoring/`` is exported to ``scratch`` (others may be editing the working tree).
    """
    if ref == "worktree":
        dirty = " (scoring/ modified)" if git("status", "--porcelain", "scoring") else ""
        return ROOT, f"worktree at {git('rev-parse', '--short', 'HEAD')}{dirty}"
    dest = scratch / "ours-src"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", ref, "scoring"], cwd=ROOT, capture_output=True,
                             check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest, f"git {ref} = {git('rev-parse', '--short', ref)}"


def commands(data: Dataset, python: str) -> dict[str, list[str]]:
    """Return the command lines being compared (ours twice: warm and cold label cache)."""
    files = ["--labels", str(data.labels), "--predictions", str(data.predictions), "--config", str(data.config)]
    ours = [python, "-m", "scoring", "evaluate", *files]
    return {"warm": ours, "cold": ours, "baseline": [python, str(BASELINE), *files, "--timings"]}


def measure(cmds: dict[str, list[str]], cwds: dict[str, Path], runs: int, warmup: int, scratch: Path
            ) -> dict[str, Runs]:
    """Run the programs in turn (order rotated each round); warm-up runs are not timed.

    The warm cache is emptied first and filled by one untimed run, so every timed warm
    run finds the labels cached by the code under test.
    """
    results = {name: Runs() for name in cmds}
    shutil.rmtree(scratch / "label-cache", ignore_errors=True)
    run_child(cmds["warm"], Runs(), scratch, cwds["warm"], timed=False, name="warm")
    names = list(cmds)
    for round_no in range(warmup + runs):
        shift = round_no % len(names)
        order = names[shift:] + names[:shift]
        for name in order:
            run_child(cmds[name], results[name], scratch, cwds[name], timed=round_no >= warmup, name=name)
        print(f"round {round_no + 1}/{warmup + runs} done" + (" (warm-up)" if round_no < warmup else ""),
              file=sys.stderr)
    return results


def compare(ours: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Return the largest difference between the two outputs on the metrics both compute."""
    pairs: list[tuple[str, Any, Any]] = []
    for m in ("accuracy", "f1", "answer_rate", "selective_accuracy", "macro_f1", "ece", "n", "answered", "correct"):
        pairs.append((f"overall.{m}", ours["overall"].get(m), base["overall"].get(m)))
    for field_name, values in base["breakdowns"].items():
        ours_values = ours.get("breakdowns", {}).get(field_name, {})
        pairs.append((f"{field_name}.keys", sorted(ours_values), sorted(values)))
        for value, metrics in values.items():
            for m in ("accuracy", "f1", "answer_rate", "n"):
                pairs.append((f"{field_name}.{value}.{m}", ours_values.get(value, {}).get(m), metrics[m]))
    for bucket in ("head", "tail", "gap"):
        for m in ("accuracy", "f1", "answer_rate"):
            pairs.append((f"popularity.{bucket}.{m}", ours.get("popularity", {}).get(bucket, {}).get(m),
                          base["popularity"][bucket][m]))
    worst, mismatches = 0.0, []
    for name, a, b in pairs:
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            diff = abs(a - b)
            worst = max(worst, diff)
            if diff > AGREEMENT_TOLERANCE:
                mismatches.append(f"{name}: ours {a!r} vs baseline {b!r}")
        elif a != b:
            mismatches.append(f"{name}: ours {a!r} vs baseline {b!r}")
    intervals = {"ours": ours["overall"].get("ci", {}).get("accuracy"), "baseline": base["overall"]["ci"]["accuracy"]}
    return {"checked": len(pairs), "max_abs_diff": worst, "mismatches": mismatches, "agree": not mismatches,
            "accuracy_ci": intervals}


def analytics(ours: dict[str, Any]) -> dict[str, Any]:
    """Return what ours computed of docs/LONG_TAIL.md (the baseline computes none of it): bins, points, aurc."""
    return {"popularity_curve_bins": len(ours.get("popularity_curve", [])),
            "risk_coverage_points": len(ours.get("risk_coverage", [])),
            "reliability_bins": len(ours.get("reliability", [])),
            "aurc": ours.get("overall", {}).get("aurc"), "ece": ours.get("overall", {}).get("ece")}


def summarize(results: dict[str, Runs], agreement: dict[str, Any], rows: int) -> dict[str, Any]:
    """Return the JSON summary of a benchmark run; the targets are judged on the warm runs."""
    out: dict[str, Any] = {"rows": rows, "runs": len(results["warm"].wall)}
    for name, r in results.items():
        out[name] = {"wall_s": r.wall, "cpu_s": r.cpu, "peak_rss_mib": r.rss,
                     "median_wall_s": statistics.median(r.wall),
                     "median_cpu_s": statistics.median(r.cpu), "median_peak_rss_mib": statistics.median(r.rss)}
    phases = [json.loads(line)["timings"] for line in results["baseline"].stderr.splitlines() if '"timings"' in line]
    out["baseline"]["last_run_phases_s"] = phases[-1] if phases else None
    base = out["baseline"]
    ratios = {}
    for name in ("warm", "cold"):
        ours = out[name]
        ratios[name] = {"speedup": base["median_wall_s"] / ours["median_wall_s"],
                        "cpu_speedup": base["median_cpu_s"] / ours["median_cpu_s"],
                        "memory_ratio": ours["median_peak_rss_mib"] / base["median_peak_rss_mib"]}
    speedup, memory_ratio = ratios["warm"]["speedup"], ratios["warm"]["memory_ratio"]
    return {
        **out,
        **ratios["warm"],
        "cold_ratios": ratios["cold"],
        "targets_met": {"speedup_ge_10": speedup >= TARGET_SPEEDUP,
                        "memory_le_one_third": memory_ratio <= TARGET_MEMORY_RATIO},
        "agreement": agreement,
    }


def print_table(summary: dict[str, Any]) -> None:
    """Print the human-readable table of medians and ratios (warm, then cold label cache)."""
    base = summary["baseline"]
    print(f"\n{summary['rows']:,} rows, {summary['runs']} runs each (medians); scoring code: {summary['ours_code']}")
    print(f"{'':24}{'scoring warm':>14}{'scoring cold':>14}{'pandas+sklearn':>16}"
          f"{'ratio warm':>14}{'ratio cold':>14}")
    warm, cold, cold_ratios = summary["warm"], summary["cold"], summary["cold_ratios"]
    for label, key, ratio, unit, fmt in (("wall time (s)", "median_wall_s", "speedup", "x faster", ".3f"),
                                         ("CPU time user+sys (s)", "median_cpu_s", "cpu_speedup", "x less", ".3f"),
                                         ("peak RSS (MiB)", "median_peak_rss_mib", "memory_ratio", "", ".1f")):
        shown = [f"{summary[ratio]:.1f}{unit}", f"{cold_ratios[ratio]:.1f}{unit}"] if unit else [
            f"{summary[ratio]:.3f}", f"{cold_ratios[ratio]:.3f}"]
        print(f"{label:24}{warm[key]:>14{fmt}}{cold[key]:>14{fmt}}{base[key]:>16{fmt}}{shown[0]:>14}{shown[1]:>14}")
    machine = summary["machine"]
    print(f"machine: {machine['cpus']} CPUs, 1-min load average {machine['load_avg_1min'][0]:.1f} before, "
          f"{machine['load_avg_1min'][1]:.1f} after (a busy machine slows both; compare ratios)")
    targets = summary["targets_met"]
    print(f"targets (warm): >=10x faster {'MET' if targets['speedup_ge_10'] else 'MISSED'}, "
          f"<=1/3 peak memory {'MET' if targets['memory_le_one_third'] else 'MISSED'}")
    if base["last_run_phases_s"]:
        print("baseline phases (last run, s): "
              + ", ".join(f"{k} {v:.2f}" for k, v in base["last_run_phases_s"].items()))
    agreement = summary["agreement"]
    print(f"agreement on {agreement['checked']} shared values (tolerance {AGREEMENT_TOLERANCE:g}): "
          f"{'OK' if agreement['agree'] else 'MISMATCH'}, max |diff| {agreement['max_abs_diff']:.3g}; "
          f"warm and cold output {'identical' if agreement['warm_equals_cold'] else 'DIFFERENT'}")
    extra = summary["analytics"]
    print(f"ours also computed (docs/LONG_TAIL.md; the baseline does not): "
          f"{extra['popularity_curve_bins']} popularity-curve "
          f"bins with intervals, {extra['risk_coverage_points']} risk-coverage points, aurc {extra['aurc']:.4f}, "
          f"{extra['reliability_bins']} reliability bins")
    print(f"overall accuracy 95% CI: ours {agreement['accuracy_ci']['ours']}, "
          f"baseline {agreement['accuracy_ci']['baseline']} (different resampling; not compared)")
    for line in agreement["mismatches"][:20]:
        print(f"  {line}")


def main() -> None:
    """Generate the inputs, run both programs, print the table and a JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each program")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each program first")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the inputs even if present")
    parser.add_argument("--python", default=sys.executable, help="interpreter for both children")
    parser.add_argument("--ours-ref", default="worktree",
                        help="git revision of scoring/ to run (e.g. HEAD), or 'worktree' (default)")
    args = parser.parse_args()
    data = generate(args.out, args.rows, args.seed, args.regenerate)
    if args.runs < 1:
        return  # --runs 0: only generate the inputs
    ours_dir, ours_code = scoring_source(args.ours_ref, args.out)
    cmds = commands(data, args.python)
    cwds = {"warm": ours_dir, "cold": ours_dir, "baseline": ROOT}
    for name, cmd in cmds.items():
        print(f"{name} (in {cwds[name]}): {' '.join(cmd)}", file=sys.stderr)
    load_before = os.getloadavg()[0]
    results = measure(cmds, cwds, args.runs, args.warmup, args.out)
    agreement = compare(json.loads(results["warm"].stdout), json.loads(results["baseline"].stdout))
    agreement["warm_equals_cold"] = results["warm"].stdout == results["cold"].stdout
    agreement["agree"] = agreement["agree"] and agreement["warm_equals_cold"]
    summary = summarize(results, agreement, args.rows)
    summary["ours_code"] = ours_code
    summary["analytics"] = analytics(json.loads(results["warm"].stdout))
    summary["machine"] = {"cpus": os.cpu_count(), "load_avg_1min": [load_before, os.getloadavg()[0]]}
    print_table(summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
